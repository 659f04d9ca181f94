//! The top level of a reference file: imports, functions, classes and module constants.
//! Nothing here is converted yet; the converter pulls in what the reference actually uses, so an
//! unsupported construct in an unused helper (say `get_inputs()` calling `torch.randn`) is no
//! error.

use crate::error::RefError;
use crate::ir::Span;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;
use std::collections::HashMap;

/// What a module-level name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A module, as a dotted path (`torch`, `torch.nn`, `torch.nn.functional`, `math`, `numpy`).
    Module(String),
    /// A name imported from a module (`from math import pi` is `math.pi`).
    Item(String),
}

pub struct ModuleScan<'a> {
    pub bindings: HashMap<String, Binding>,
    pub functions: HashMap<String, &'a ast::StmtFunctionDef>,
    pub classes: HashMap<String, &'a ast::StmtClassDef>,
    /// `NAME = expr` at module level (the last assignment wins, as when Python runs the file).
    pub constants: HashMap<String, &'a Expr>,
    /// Classes in file order, to find "the only nn.Module".
    pub class_order: Vec<String>,
}

pub fn scan(body: &[Stmt]) -> ModuleScan<'_> {
    let mut scan =
        ModuleScan { bindings: HashMap::new(), functions: HashMap::new(), classes: HashMap::new(), constants: HashMap::new(), class_order: Vec::new() };
    for stmt in body {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let path = alias.name.id.as_str();
                    match &alias.asname {
                        Some(asname) => {
                            scan.bindings.insert(asname.id.to_string(), Binding::Module(path.to_string()));
                        }
                        None => {
                            // `import torch.nn.functional` binds `torch`.
                            let root = path.split('.').next().unwrap_or(path);
                            scan.bindings.insert(root.to_string(), Binding::Module(root.to_string()));
                        }
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let Some(module) = &import.module else { continue };
                for alias in &import.names {
                    let name = alias.name.id.as_str();
                    let bound = alias.asname.as_ref().map_or(name, |a| a.id.as_str());
                    let path = format!("{}.{}", module.id, name);
                    let binding = if is_module_path(&path) { Binding::Module(path) } else { Binding::Item(path) };
                    scan.bindings.insert(bound.to_string(), binding);
                }
            }
            Stmt::FunctionDef(def) => {
                scan.functions.insert(def.name.id.to_string(), def);
            }
            Stmt::ClassDef(class) => {
                scan.classes.insert(class.name.id.to_string(), class);
                scan.class_order.push(class.name.id.to_string());
            }
            Stmt::Assign(assign) => {
                if let [Expr::Name(name)] = assign.targets.as_slice() {
                    scan.constants.insert(name.id.to_string(), &assign.value);
                }
            }
            Stmt::AnnAssign(assign) => {
                if let (Expr::Name(name), Some(value)) = (&*assign.target, &assign.value) {
                    scan.constants.insert(name.id.to_string(), value);
                }
            }
            // Anything else at module level (`if __name__ == "__main__":`, `torch.manual_seed(0)`)
            // does not affect what the reference function computes.
            _ => {}
        }
    }
    scan
}

/// The modules a `from X import Y` may bring in as modules rather than items.
fn is_module_path(path: &str) -> bool {
    matches!(path, "torch.nn" | "torch.nn.functional" | "torch.special" | "torch.linalg" | "torch.fft" | "numpy" | "math")
}

/// Whether a class derives from `nn.Module` (through any of the import spellings).
pub fn is_nn_module(scan: &ModuleScan<'_>, class: &ast::StmtClassDef) -> bool {
    let Some(arguments) = &class.arguments else { return false };
    arguments.args.iter().any(|base| dotted_path(scan, base).as_deref() == Some("torch.nn.Module"))
}

/// The fully qualified dotted path of `expr` when it is a chain of attributes on an imported
/// module or item (`F.silu` is `torch.nn.functional.silu`); `None` otherwise.
pub fn dotted_path(scan: &ModuleScan<'_>, expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => match scan.bindings.get(name.id.as_str())? {
            Binding::Module(path) | Binding::Item(path) => Some(path.clone()),
        },
        Expr::Attribute(attr) => Some(format!("{}.{}", dotted_path(scan, &attr.value)?, attr.attr.id)),
        _ => None,
    }
}

/// The byte span of any ruff node.
pub fn span_of(node: &impl Ranged) -> Span {
    let range = node.range();
    range.start().to_usize()..range.end().to_usize()
}

/// Picks the reference function: `entry` if given (`name` or `Class.method`), else `reference`,
/// else the `forward` of the only `nn.Module` subclass.
pub fn choose_entry(scan: &ModuleScan<'_>, entry: Option<&str>, source_len: usize) -> Result<EntryPoint, RefError> {
    let whole = 0..source_len;
    if let Some(entry) = entry {
        if let Some((class, method)) = entry.split_once('.') {
            if !scan.classes.contains_key(class) {
                return Err(RefError::new(whole, format!("no class `{class}` in the reference file")));
            }
            return Ok(EntryPoint::Method { class: class.to_string(), method: method.to_string() });
        }
        if scan.functions.contains_key(entry) {
            return Ok(EntryPoint::Function(entry.to_string()));
        }
        return Err(RefError::new(whole, format!("no function `{entry}` in the reference file")));
    }
    if scan.functions.contains_key("reference") {
        return Ok(EntryPoint::Function("reference".to_string()));
    }
    let modules: Vec<&String> = scan.class_order.iter().filter(|c| is_nn_module(scan, scan.classes[c.as_str()])).collect();
    match modules.as_slice() {
        [only] => Ok(EntryPoint::Method { class: (*only).clone(), method: "forward".to_string() }),
        [] => Err(RefError::new(whole, "no reference found: expected a function `reference` or an `nn.Module` subclass with `forward`")),
        many => Err(RefError::new(
            whole,
            format!(
                "several nn.Module classes ({}); name the reference, e.g. `{}.forward`",
                many.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", "),
                many[0]
            ),
        )),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntryPoint {
    Function(String),
    Method { class: String, method: String },
}
