//! A kernel whose text did not parse completely is not the kernel that was written: checking
//! what did parse would prove something about another kernel. Such a kernel is `error`
//! ([`Reason::IncompleteParse`](crate::Reason::IncompleteParse)), never `verified`.

/// Why `func`'s text did not parse completely: the first parse error inside its span, or a body
/// without its closing brace. `None` when the whole kernel parsed. `text` is the parsed text.
///
/// An error at the function's very first token is not its own: it is where the parser noticed
/// that the function before it had lost its closing brace.
pub fn incomplete_parse(parsed: &ptx::Parse, func: &ptx::Function, text: &str) -> Option<String> {
    let (start, end) = (func.span.start, func.span.end);
    if let Some(e) = parsed.errors.iter().find(|e| e.span.start > start && e.span.start < end) {
        return Some(e.message.clone());
    }
    let closed = text.get(..end as usize).is_some_and(|t| t.trim_end().ends_with('}'));
    (func.body.is_some() && !closed).then(|| "expected `}` at the end of the kernel's body".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn incomplete(text: &str) -> Vec<(String, Option<String>)> {
        let parsed = ptx::parse(text);
        parsed.module.functions.iter().map(|f| (f.name.to_string(), incomplete_parse(&parsed, f, text))).collect()
    }

    #[test]
    fn finds_errors_inside_a_kernel_and_missing_braces() {
        let ok = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry a()\n{\n\tret;\n}\n";
        assert_eq!(incomplete(ok), [("a".to_string(), None)]);
        let broken = ok.replace("\tret;", "\tld.global.f32 %f1, [%rd1+;\n\tret;");
        assert!(incomplete(&broken)[0].1.is_some(), "{:?}", incomplete(&broken));
        let cut = &ok[..ok.len() - 3];
        assert!(incomplete(cut)[0].1.is_some(), "{:?}", incomplete(cut));
        // The first kernel lost its brace; the second is whole.
        let two = format!("{}{}", &ok[..ok.len() - 2], ".visible .entry b()\n{\n\tret;\n}\n");
        let got = incomplete(&two);
        assert!(got[0].1.is_some(), "{got:?}");
        assert_eq!(got[1], ("b".to_string(), None), "{got:?}");
    }
}
