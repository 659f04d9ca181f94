//! Field offsets of a `struct` a kernel takes by value (ggml's `soft_max_params`, a CUTLASS-style
//! `Params`), read from its definition in the kernel's `.cu`, so that `lark.toml` can say
//! `"p.ncols" = { value = 1024 }` rather than the byte offset `"p+16"` the PTX knows it by.
//!
//! Only plain layouts are computed: members of built-in arithmetic types, CUDA's vector and
//! half types, pointers, arrays of those and structs of those, laid out as the C ABI does
//! (each member at the next multiple of its alignment, the size rounded up to the largest
//! alignment). Member functions, constructors and access specifiers do not change a layout and
//! are skipped. Anything else (bit fields, templates, alignment attributes, base classes,
//! unknown types) is refused with the reason, and the byte-offset form still works; the caller
//! also checks the size against the PTX parameter's, so a layout read wrongly is never used.

/// One field: its name (`ncols`, `dims.x`, `v[1]`), byte offset, size and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    pub name: String,
    pub offset: u32,
    pub bytes: u32,
    pub kind: FieldKind,
}

/// What a field holds, for the value `lark.toml` may give it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer or `bool`.
    Integer,
    /// A pointer: declared as the buffer it points to (`{ dtype = "f16", len = 4096 }`).
    Pointer,
    /// `float`, `double`, `half`, `bfloat16`.
    Float,
    /// A CUDA vector type (`float2`, `int4`): declared element by element, by byte offset.
    Vector,
}

/// A struct's fields, flattened (nested structs' fields as `outer.inner`, array elements as
/// `v[i]`), with its size and alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    pub fields: Vec<FieldLayout>,
    pub size: u32,
    pub align: u32,
}

impl StructLayout {
    pub fn field(&self, name: &str) -> Option<&FieldLayout> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A layout with more named fields than this (array elements count one each) is refused: no
/// kernel parameter holds more (CUDA allows 4 KiB of them, 32 KiB on recent drivers), and a
/// struct of a huge array must not cost the editor its memory.
const MAX_FIELDS: usize = 32 * 1024;

/// Structs nested deeper than this are refused (a struct that contains itself through a
/// typedef would otherwise recurse forever).
const MAX_NESTING: u32 = 8;

/// The layout of the struct named by the parameter type `ty` (`const soft_max_params`,
/// `struct P`), defined in `cu`.
pub fn struct_layout(cu: &str, ty: &str) -> Result<StructLayout, String> {
    let text = strip_comments(cu);
    let name = type_name(ty);
    if name.contains('<') {
        return Err(format!("`{name}` is a template; its layout is not read from the source"));
    }
    layout_of(&text, &name, 0)
}

/// `const struct soft_max_params` -> `soft_max_params`.
fn type_name(ty: &str) -> String {
    ty.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile" | "struct" | "class" | "__restrict__")).collect::<Vec<_>>().join(" ")
}

fn layout_of(text: &str, name: &str, depth: u32) -> Result<StructLayout, String> {
    if depth > MAX_NESTING {
        return Err(format!("`{name}` nests structs more than {MAX_NESTING} deep"));
    }
    let body = struct_body(text, name).ok_or_else(|| format!("no definition of `struct {name}` in the source"))?;
    let mut fields = Vec::new();
    let (mut offset, mut align) = (0u32, 1u32);
    for decl in members(&body)? {
        let (ty, declarators) = split_declaration(&decl).ok_or_else(|| format!("member `{decl}` of `{name}` is not read"))?;
        for d in declarators {
            let (pointer, field, dims) = declarator(&d).ok_or_else(|| format!("member `{d}` of `{name}` is not read"))?;
            let (elem, elem_align, kind, inner) = if pointer { (8, 8, FieldKind::Pointer, None) } else { type_layout(text, &ty, depth)? };
            let count = dims.iter().try_fold(1u32, |n, &d| n.checked_mul(d)).filter(|&n| (n as usize) < MAX_FIELDS);
            let Some(count) = count else { return Err(format!("member `{d}` of `{name}` is too large an array")) };
            let elements_named = count as usize * inner.as_ref().map_or(1, |i| i.fields.len().max(1));
            if fields.len() + elements_named > MAX_FIELDS {
                return Err(format!("`{name}` has more than {MAX_FIELDS} fields"));
            }
            offset = offset.next_multiple_of(elem_align);
            align = align.max(elem_align);
            let elements = if dims.is_empty() { vec![(field.clone(), 0)] } else { element_names(&field, &dims, elem) };
            for (element, at) in elements {
                match &inner {
                    Some(inner) => fields.extend(inner.fields.iter().map(|f| FieldLayout {
                        name: format!("{element}.{}", f.name),
                        offset: offset + at + f.offset,
                        bytes: f.bytes,
                        kind: f.kind,
                    })),
                    None => fields.push(FieldLayout { name: element, offset: offset + at, bytes: elem, kind }),
                }
            }
            if !dims.is_empty() {
                // The array itself names its first element (`v` is `v[0]`), as C decays it.
                if let Some(first) = fields.iter().find(|f| f.name.starts_with(&format!("{field}[0]"))).cloned() {
                    if inner.is_none() {
                        fields.push(FieldLayout { name: field.clone(), ..first });
                    }
                }
            }
            offset = elem.checked_mul(count).and_then(|b| offset.checked_add(b)).ok_or_else(|| format!("`{name}` is too large"))?;
        }
    }
    Ok(StructLayout { fields, size: offset.next_multiple_of(align), align })
}

/// `v[2][3]` of 4-byte elements: `v[0][0]` at 0 ... `v[1][2]` at 20.
fn element_names(field: &str, dims: &[u32], elem: u32) -> Vec<(String, u32)> {
    let mut out = vec![(field.to_string(), 0u32)];
    for (level, &n) in dims.iter().enumerate() {
        let stride: u32 = dims[level + 1..].iter().product::<u32>() * elem;
        out = out.into_iter().flat_map(|(name, at)| (0..n).map(move |i| (format!("{name}[{i}]"), at + i * stride))).collect();
    }
    out
}

/// Size and alignment of a member type, and the layout of a struct type's own fields.
fn type_layout(text: &str, ty: &str, depth: u32) -> Result<(u32, u32, FieldKind, Option<StructLayout>), String> {
    let name = type_name(ty);
    if let Some(size) = builtin_size(&name) {
        let float = matches!(name.as_str(), "float" | "double" | "half" | "__half" | "nv_bfloat16" | "__nv_bfloat16");
        return Ok((size, size.min(8), if float { FieldKind::Float } else { FieldKind::Integer }, None));
    }
    if let Some((size, align)) = vector_type(&name) {
        return Ok((size, align, FieldKind::Vector, None));
    }
    let inner = layout_of(text, &name, depth + 1).map_err(|e| format!("member type `{name}`: {e}"))?;
    Ok((inner.size, inner.align, FieldKind::Integer, Some(inner)))
}

fn builtin_size(name: &str) -> Option<u32> {
    Some(match name {
        "char" | "signed char" | "unsigned char" | "bool" | "int8_t" | "uint8_t" => 1,
        "short" | "short int" | "signed short" | "unsigned short" | "unsigned short int" | "int16_t" | "uint16_t" | "half" | "__half" | "nv_bfloat16"
        | "__nv_bfloat16" => 2,
        "int" | "signed" | "signed int" | "unsigned" | "unsigned int" | "int32_t" | "uint32_t" | "float" => 4,
        "long"
        | "long int"
        | "signed long"
        | "unsigned long"
        | "unsigned long int"
        | "long long"
        | "long long int"
        | "signed long long"
        | "unsigned long long"
        | "unsigned long long int"
        | "int64_t"
        | "uint64_t"
        | "size_t"
        | "ptrdiff_t"
        | "intptr_t"
        | "uintptr_t"
        | "double" => 8,
        _ => return None,
    })
}

/// CUDA's vector types (`float2`, `int4`, `half2`...): size and alignment.
fn vector_type(name: &str) -> Option<(u32, u32)> {
    match name {
        "half2" | "__half2" | "nv_bfloat162" | "__nv_bfloat162" => return Some((4, 4)),
        _ => {}
    }
    let n: u32 = name.chars().last()?.to_digit(10)?;
    let elem = builtin_size(match &name[..name.len() - 1] {
        "char" => "char",
        "uchar" => "unsigned char",
        "short" => "short",
        "ushort" => "unsigned short",
        "int" => "int",
        "uint" => "unsigned int",
        "float" => "float",
        "long" | "longlong" => "long long",
        "ulong" | "ulonglong" => "unsigned long long",
        "double" => "double",
        _ => return None,
    })?;
    // CUDA aligns 2- and 4-element vectors to their size (capped at 16); 3-element ones to
    // their element.
    let size = elem * n;
    let align = match n {
        1 => elem,
        2 | 4 => size.min(16),
        3 => elem,
        _ => return None,
    };
    Some((size, align))
}

/// The text between the braces of `struct name { ... };` or `typedef struct { ... } name;`.
fn struct_body(text: &str, name: &str) -> Option<String> {
    for keyword in ["struct", "class"] {
        let mut from = 0;
        while let Some(pos) = find_word(text, keyword, from) {
            from = pos + keyword.len();
            let rest = text[from..].trim_start();
            if let Some(after) = rest.strip_prefix(name) {
                let after = after.trim_start();
                if after.starts_with('{') {
                    return balanced(after);
                }
            }
            // `typedef struct { ... } name;`
            if rest.starts_with('{') && text[..pos].trim_end().ends_with("typedef") {
                let body = balanced(rest)?;
                let tail = rest[body.len() + 2..].trim_start();
                if tail.strip_prefix(name).is_some_and(|t| t.trim_start().starts_with(';')) {
                    return Some(body);
                }
            }
        }
    }
    None
}

/// The contents of the balanced `{ ... }` that `s` starts with.
fn balanced(s: &str) -> Option<String> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(s[1..i].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(p) = text[at..].find(word) {
        let start = at + p;
        let end = start + word.len();
        let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if (start == 0 || !ident(bytes[start - 1])) && (end >= bytes.len() || !ident(bytes[end])) {
            return Some(start);
        }
        at = end;
    }
    None
}

/// The data members of a struct body: method bodies and function declarations, access
/// specifiers and static members dropped; refused where the layout would need more than
/// this module reads.
fn members(body: &str) -> Result<Vec<String>, String> {
    // Inner braces are method bodies (or nested definitions, refused below): each ends a
    // declaration, as its `;` would.
    let mut flat = String::new();
    let mut depth = 0;
    for c in body.chars() {
        match c {
            '{' => {
                if depth == 0 {
                    flat.push(';');
                }
                depth += 1;
            }
            '}' => depth -= 1,
            _ if depth == 0 => flat.push(c),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for decl in flat.split(';') {
        let mut decl = decl.trim().to_string();
        for spec in ["public:", "private:", "protected:"] {
            decl = decl.replace(spec, " ");
        }
        let decl = decl.split_whitespace().collect::<Vec<_>>().join(" ");
        let first = decl.split_whitespace().next().unwrap_or("");
        if decl.is_empty() || decl.contains('(') || matches!(first, "static" | "using" | "typedef" | "friend" | "template" | "constexpr") {
            continue;
        }
        if decl.contains(':') {
            return Err(format!("member `{decl}` is a bit field"));
        }
        if decl.contains("alignas") || decl.contains("__align__") || decl.contains("virtual") {
            return Err(format!("member `{decl}` changes the layout in ways not read here"));
        }
        if matches!(first, "struct" | "union" | "class" | "enum") && !decl.contains(' ') {
            return Err(format!("member `{decl}` is a nested definition"));
        }
        out.push(decl);
    }
    Ok(out)
}

/// `long long a, *b, c[4]` -> (`long long`, [`a`, `*b`, `c[4]`]).
fn split_declaration(decl: &str) -> Option<(String, Vec<String>)> {
    let mut parts = decl.split(',');
    let first = parts.next()?.trim();
    // The type is everything before the first declarator's name (and its `*`s).
    let name_start = first.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '[' || c == ']'))? + 1;
    let (ty, first_decl) = first.split_at(name_start);
    let stars = ty.trim_end().chars().rev().take_while(|&c| c == '*' || c == ' ').filter(|&c| c == '*').count();
    let ty = ty.trim_end().trim_end_matches(['*', ' ']).trim().to_string();
    if ty.is_empty() {
        return None;
    }
    let mut declarators = vec![format!("{}{first_decl}", "*".repeat(stars))];
    declarators.extend(parts.map(|p| p.trim().to_string()));
    Some((ty, declarators))
}

/// `*b` -> (pointer, `b`, []); `c[4][2]` -> (not a pointer, `c`, [4, 2]).
fn declarator(d: &str) -> Option<(bool, String, Vec<u32>)> {
    let pointer = d.starts_with('*');
    let d = d.trim_start_matches(['*', ' ']);
    let (name, dims) = match d.find('[') {
        Some(p) => (&d[..p], &d[p..]),
        None => (d, ""),
    };
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let mut sizes = Vec::new();
    for part in dims.split('[').skip(1) {
        sizes.push(part.strip_suffix(']')?.trim().parse::<u32>().ok().filter(|&n| n > 0)?);
    }
    Some((pointer, name.to_string(), sizes))
}

/// The source without `//` and `/* */` comments (string literals are not expected in struct
/// definitions and are left alone).
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |p| &r[p..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |p| &r[p + 2..]);
            out.push(' ');
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GGML: &str = "struct soft_max_params {\n  long long nheads;\n  unsigned n_head_log2; // log2\n  long long ncols;\n  long long ne00, ne01;\n  float scale;\n  float m0;\n};\n";

    #[test]
    fn a_plain_struct_is_laid_out_as_the_c_abi_does() {
        let l = struct_layout(GGML, "const soft_max_params").unwrap();
        let at = |n: &str| l.field(n).map(|f| (f.offset, f.bytes));
        assert_eq!(at("nheads"), Some((0, 8)));
        assert_eq!(at("n_head_log2"), Some((8, 4)));
        assert_eq!(at("ncols"), Some((16, 8)), "padded to the next multiple of 8");
        assert_eq!(at("ne01"), Some((32, 8)));
        assert_eq!(at("scale"), Some((40, 4)));
        assert_eq!(at("m0"), Some((44, 4)));
        assert_eq!((l.size, l.align), (48, 8));
        assert_eq!((l.field("ncols").unwrap().kind, l.field("scale").unwrap().kind), (FieldKind::Integer, FieldKind::Float));
    }

    #[test]
    fn arrays_pointers_nested_structs_and_methods() {
        let cu = "typedef struct { float v[2]; } dims_t;\nstruct P {\n  const float* x;\n  int n, *idx;\n  dims_t d;\n  char tag;\n  __device__ int rows() const { return n; }\n  P(): n(0) {}\n public:\n  static const int K = 4;\n};";
        let l = struct_layout(cu, "P").unwrap();
        let at = |n: &str| l.field(n).map(|f| f.offset);
        assert_eq!(at("x"), Some(0));
        assert_eq!(at("n"), Some(8));
        assert_eq!(at("idx"), Some(16));
        assert_eq!(at("d.v[0]"), Some(24));
        assert_eq!(at("d.v[1]"), Some(28));
        assert_eq!(at("tag"), Some(32));
        assert_eq!(l.size, 40);
    }

    #[test]
    fn what_the_layout_cannot_be_read_for_is_refused_with_the_reason() {
        assert!(struct_layout("struct A { int a : 3; };", "A").unwrap_err().contains("bit field"));
        assert!(struct_layout("struct A { my_t a; };", "A").unwrap_err().contains("my_t"));
        assert!(struct_layout("struct A { int a; };", "B").unwrap_err().contains("no definition"));
        assert!(struct_layout("", "Params<T>").unwrap_err().contains("template"));
        assert!(struct_layout("struct alignas(16) A { int a; };", "A").is_err());
        assert!(struct_layout("struct A { float v[100000000]; };", "A").unwrap_err().contains("too large an array"));
        assert!(struct_layout("struct A { A a; };", "A").unwrap_err().contains("nests structs"));
        assert!(struct_layout("struct A { int a;", "A").unwrap_err().contains("no definition"), "an unterminated definition");
    }
}
