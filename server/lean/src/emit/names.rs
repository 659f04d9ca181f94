//! Turning arbitrary names into Lean identifiers and string literals.
//!
//! PTX names (`_Z9block_maxILi256EEvPKfPfi`, `$L__BB0_2`, `%r12`, `smem.x`) contain characters
//! Lean identifiers cannot (`$`, `%`, `.` inside a component); registers and labels therefore stay
//! strings in the emitted term, and only kernel and module names become identifiers.

use crate::lexer::{is_id_first, is_id_rest};

/// Words Lean reserves (commands, term syntax, tactics that are keywords) and a few more that
/// generated code must never produce as a bare identifier.
pub const RESERVED: &[&str] = &[
    "abbrev",
    "at",
    "attribute",
    "axiom",
    "by",
    "calc",
    "class",
    "def",
    "deriving",
    "do",
    "else",
    "end",
    "example",
    "export",
    "extends",
    "for",
    "from",
    "fun",
    "have",
    "if",
    "import",
    "in",
    "inductive",
    "infix",
    "infixl",
    "infixr",
    "instance",
    "let",
    "local",
    "macro",
    "match",
    "mut",
    "mutual",
    "namespace",
    "noncomputable",
    "notation",
    "open",
    "opaque",
    "partial",
    "postfix",
    "prefix",
    "private",
    "protected",
    "return",
    "section",
    "set_option",
    "show",
    "sorry",
    "structure",
    "suffices",
    "syntax",
    "then",
    "theorem",
    "universe",
    "unless",
    "unsafe",
    "variable",
    "where",
    "with",
    "λ",
    "Type",
    "Sort",
    "Prop",
];

/// A Lean identifier (one component) for `name`: the name itself when it is a plain ASCII
/// identifier that is not reserved, otherwise the name in `«»` (Lean's escape for arbitrary
/// components). Names that cannot be escaped (containing `«`, `»` or a control character) get an
/// injective hexadecimal spelling, `x_` followed by the UTF-8 bytes.
pub fn lean_ident(name: &str) -> String {
    // A leading `_` is legal in Lean but reads like a placeholder; such names are escaped.
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.chars().next().is_some_and(is_id_first)
        && name.chars().all(is_id_rest)
        && !RESERVED.contains(&name);
    if plain {
        return name.to_string();
    }
    let escapable = !name.is_empty() && !name.chars().any(|c| c == '«' || c == '»' || c.is_control());
    if escapable {
        return format!("«{name}»");
    }
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("x_{hex}")
}

/// A Lean string literal for `s`: `\` and `"` escaped, control characters as `\n`, `\t`, `\r` or
/// `\xHH`, everything else (UTF-8 included) as is. (`{` needs no escape: a plain string literal
/// does not interpolate, and Lean rejects `\{` outside interpolated strings.)
pub fn lean_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `--` comment line's text: control characters (a newline would end the comment and turn the
/// rest into code) become spaces.
pub fn comment_text(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn identifiers() {
        let shown: Vec<String> =
            ["vector_add", "_Z9block_maxILi256EEvPKfPfi", "$L__BB0_2", "end", "a.b", "%r1", "«x»", "", "é"].iter().map(|n| lean_ident(n)).collect();
        expect![[r#"["vector_add", "«_Z9block_maxILi256EEvPKfPfi»", "«$L__BB0_2»", "«end»", "«a.b»", "«%r1»", "x_c2ab78c2bb", "x_", "«é»"]"#]]
            .assert_eq(&format!("{shown:?}"));
    }

    #[test]
    fn strings() {
        expect![[r#""a\"b\\c\n{d} \x01 é""#]].assert_eq(&lean_string("a\"b\\c\n{d} \u{1} é"));
    }
}
