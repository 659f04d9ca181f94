//! Small edits of a `lark.toml` that keep everything else as written: what an editor's quick fix
//! inserts (an assumption about an index buffer). Positions come from the parsed document, so
//! comments, order and formatting survive.

use crate::interface::Assumption;
use crate::lark_toml::key_segment;
use crate::write_toml::toml_string;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Value};

/// Replace `range` of the text with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TomlEdit {
    pub range: Range<usize>,
    pub text: String,
}

/// The edit that adds `assumption` to the `assume` list of buffer `param` of `kernel` (the name
/// its section uses, or will use) in the lark.toml `text`, creating the parameter's entry or the
/// kernel's `params` table when they are missing. `None` when the text does not parse, already
/// says so, or writes the entry in a form this does not edit (a dotted key, say); a caller then
/// offers nothing rather than a guess.
pub fn add_assumption(text: &str, kernel: &str, param: &str, assumption: &Assumption) -> Option<TomlEdit> {
    let doc = ImDocument::parse(text).ok()?;
    let item = toml_string(&assumption.to_string());
    let entry = format!("{} = {{ assume = [{item}] }}", key_segment(param));
    let kernel_item = doc.get("kernel").and_then(|k| k.get(kernel));
    let params = kernel_item.and_then(|k| k.get("params"));
    let Some(params) = params else {
        // No params table for the kernel: a new one at the end of the file. (A section for the
        // kernel defined inline, `kernel.k = { ... }`, cannot be extended that way.)
        if kernel_item.is_some_and(|k| !k.is_table()) {
            return None;
        }
        let sep = if text.is_empty() || text.ends_with("\n\n") {
            ""
        } else if text.ends_with('\n') {
            "\n"
        } else {
            "\n\n"
        };
        let section = format!("kernel.{}.params", key_segment(kernel));
        return Some(TomlEdit { range: text.len()..text.len(), text: format!("{sep}[{section}]\n{entry}\n") });
    };
    match params.get(param) {
        None => {
            // A `[kernel.k.params]` table: the entry goes on the line after its header.
            let table = params.as_table()?;
            let at = line_after(text, table.span()?.start)?;
            Some(TomlEdit { range: at..at, text: format!("{entry}\n") })
        }
        Some(Item::Value(Value::InlineTable(t))) => {
            if let Some(assume) = t.get("assume") {
                return add_to_array(text, assume.as_array()?, assumption, &item);
            }
            let span = t.span()?;
            let last_end = t.iter().filter_map(|(_, v)| v.span()).map(|s| s.end).max();
            match last_end {
                Some(end) => Some(TomlEdit { range: end..end, text: format!(", assume = [{item}]") }),
                // `{ }`: right after the brace.
                None => Some(TomlEdit { range: span.start + 1..span.end - 1, text: format!(" assume = [{item}] ") }),
            }
        }
        Some(Item::Table(t)) => {
            if let Some(assume) = t.get("assume") {
                return add_to_array(text, assume.as_array()?, assumption, &item);
            }
            let at = line_after(text, t.span()?.start)?;
            Some(TomlEdit { range: at..at, text: format!("assume = [{item}]\n") })
        }
        Some(_) => None,
    }
}

/// Appends `item` to an existing `assume = [...]`, unless it is already there.
fn add_to_array(text: &str, array: &toml_edit::Array, assumption: &Assumption, item: &str) -> Option<TomlEdit> {
    let already = array.iter().any(|v| v.as_str().and_then(|s| crate::lark_toml::parse_assumption(s).ok()).as_ref() == Some(assumption));
    if already {
        return None;
    }
    match array.iter().filter_map(Value::span).map(|s| s.end).max() {
        Some(end) => Some(TomlEdit { range: end..end, text: format!(", {item}") }),
        None => {
            let span = array.span()?;
            let inner = text.get(span.start + 1..span.end.checked_sub(1)?)?;
            inner.trim().is_empty().then(|| TomlEdit { range: span.start + 1..span.end - 1, text: item.to_string() })
        }
    }
}

/// The offset of the start of the line after the one holding `offset` (the end of the text when
/// that line is the last, with a newline added by the caller's insertion if needed).
fn line_after(text: &str, offset: usize) -> Option<usize> {
    let rest = text.get(offset..)?;
    Some(rest.find('\n').map_or(text.len(), |i| offset + i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    fn check(text: &str, param: &str, a: Assumption, expect: Expect) {
        let shown = match add_assumption(text, "k", param, &a) {
            Some(e) => {
                let mut out = text.to_string();
                out.replace_range(e.range, &e.text);
                // What the edit produces must parse and say what was asked.
                let iface = crate::parse_lark_toml("lark.toml", &out).unwrap_or_else(|e| panic!("{e}\n{out}"));
                match &iface.kernels["k"].params[param] {
                    crate::ParamSpec::Buffer { assume, .. } => assert!(assume.contains(&a), "{out}"),
                    other => panic!("{other:?}"),
                }
                out
            }
            None => "(no edit)".into(),
        };
        expect.assert_eq(&shown);
    }

    #[test]
    fn adds_to_every_form_of_entry() {
        check(
            "[kernel.k.params]\nslots = { dtype = \"i64\", len = 8 }  # the slot mapping\n",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k.params]
                slots = { dtype = "i64", len = 8, assume = ["injective"] }  # the slot mapping
            "#]],
        );
        check(
            "[kernel.k.params]\nslots = { dtype = \"i64\", assume = [\"in_range(0, 8)\"] }\n",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k.params]
                slots = { dtype = "i64", assume = ["in_range(0, 8)", "injective"] }
            "#]],
        );
        check(
            "[kernel.k.params]\nslots = { dtype = \"i64\", assume = [] }\n",
            "slots",
            Assumption::InRange(0, 16),
            expect![[r#"
                [kernel.k.params]
                slots = { dtype = "i64", assume = ["in_range(0, 16)"] }
            "#]],
        );
        check(
            "[kernel.k]\nblock = [32, 1, 1]\n[kernel.k.params]\nn = { value = 3 }\n",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k]
                block = [32, 1, 1]
                [kernel.k.params]
                slots = { assume = ["injective"] }
                n = { value = 3 }
            "#]],
        );
        check(
            "[kernel.k.params.slots]\ndtype = \"i32\"\n",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k.params.slots]
                assume = ["injective"]
                dtype = "i32"
            "#]],
        );
        check(
            "[kernel.k]\nblock = [32, 1, 1]",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k]
                block = [32, 1, 1]

                [kernel.k.params]
                slots = { assume = ["injective"] }
            "#]],
        );
        check(
            "",
            "slots",
            Assumption::Injective,
            expect![[r#"
                [kernel.k.params]
                slots = { assume = ["injective"] }
            "#]],
        );
    }

    #[test]
    fn declines_what_it_cannot_edit_safely() {
        check("[kernel.k.params]\nslots = { assume = [\"injective\"] }\n", "slots", Assumption::Injective, expect!["(no edit)"]);
        check("kernel.k = { block = [1, 1, 1] }\n", "slots", Assumption::Injective, expect!["(no edit)"]);
        check("[kernel.k.params\n", "slots", Assumption::Injective, expect!["(no edit)"]);
    }
}
