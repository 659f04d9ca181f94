//! Error recovery and bad input. Each fixture is a small PTX module (the `.version`/`.target`/
//! `.address_size` header is added when the fixture has none); `check` renders every diagnostic
//! under the line it points at, with carets under exactly its span, and then the functions that
//! were read with their opcodes, so that each expectation shows both the error and that parsing
//! went on after it. `UPDATE_EXPECT=1 cargo test -p ptx --test errors` rewrites the expectations.

use expect_test::{expect, Expect};
use ptx::{parse, parse_bytes, LineIndex, Parse};
use std::fmt::Write;
use std::path::PathBuf;

const HEADER: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

/// Diagnostics with carets (a zero-width span is a `|`), then `name: opcodes` per function.
/// Lines are numbered within the fixture, without the added header.
fn render(text: &str, skip_lines: u32, parsed: &Parse) -> String {
    let index = LineIndex::new(text);
    let mut out = String::new();
    for e in &parsed.errors {
        assert!(e.span.start <= e.span.end && e.span.end as usize <= text.len(), "span {:?} outside the text", e.span);
        assert!(text.is_char_boundary(e.span.start as usize) && text.is_char_boundary(e.span.end as usize), "span {:?} splits a character", e.span);
        let (line, col) = index.line_col(e.span.start);
        // Control characters are shown as `?` (one byte each, so the carets stay aligned).
        let line_text = text[index.line_range(text, line)].replace(|c: char| c.is_ascii_control() && c != '\t', "?");
        let (end_line, end_col) = index.line_col(e.span.end);
        let width = if end_line == line { (end_col - col) as usize } else { line_text.len() - col as usize };
        let marks = if width == 0 { "|".to_string() } else { "^".repeat(width) };
        let more = if end_line > line { format!(" (to line {})", end_line + 1 - skip_lines) } else { String::new() };
        let shown = line + 1 - skip_lines.min(line + 1);
        let _ = writeln!(out, "{shown:<3}| {line_text}");
        let _ = writeln!(out, "   | {}{marks}{more} {}", " ".repeat(col as usize), e.message);
    }
    for f in &parsed.module.functions {
        let ops: Vec<&str> = f.instructions().map(|i| i.opcode.as_str()).collect();
        let _ = writeln!(out, "{}: {}", f.name, ops.join(" "));
    }
    out
}

fn check(fixture: &str, expect: Expect) {
    let (text, skip) = if fixture.starts_with(".version") { (fixture.to_string(), 0) } else { (format!("{HEADER}{fixture}"), 3) };
    let parsed = parse(&text);
    expect.assert_eq(&render(&text, skip, &parsed));
}

fn check_bytes(bytes: &[u8], expect: Expect) {
    let (text, parsed) = parse_bytes(bytes);
    expect.assert_eq(&render(&text, 0, &parsed));
}

// ----- one bad line, one diagnostic, parsing goes on -----------------------------------------

#[test]
fn missing_comma_between_operands() {
    check(
        r#"
.visible .entry k()
{
    add.s32 %r1, %r2 %r3;
    mov.u32 %r4, 1;
    ret;
}
"#,
        expect![[r#"
            4  |     add.s32 %r1, %r2 %r3;
               |                      ^^^ expected `,` or `;`, found `%r3`
            k: mov ret
        "#]],
    );
}

#[test]
fn empty_operand() {
    check(
        r#"
.visible .entry k()
{
    add.s32 %r1, , %r3;
    ret;
}
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            4  |     add.s32 %r1, , %r3;
               |                  ^ expected an operand, found `,`
            k: ret
            k2: ret
        "#]],
    );
}

#[test]
fn missing_semicolon_keeps_the_next_line() {
    check(
        r#"
.visible .entry k()
{
    st.global.f32 [%rd1], %f1
    ret;
}
"#,
        expect![[r#"
            5  |     ret;
               |     ^^^ expected `,` or `;`, found `ret`
            k: ret
        "#]],
    );
}

#[test]
fn missing_semicolon_before_a_label() {
    check(
        r#"
.visible .entry k()
{
    bra.uni $L__BB0_2
$L__BB0_2:
    ret;
}
"#,
        expect![[r#"
            5  | $L__BB0_2:
               | ^^^^^^^^^ expected `,` or `;`, found `$L__BB0_2`
            k: ret
        "#]],
    );
}

#[test]
fn address_without_offset() {
    check(
        r#"
.visible .entry k()
{
    ld.global.f32 %f1, [%rd1+];
    st.global.f32 [%rd1], %f1;
    ret;
}
"#,
        expect![[r#"
            4  |     ld.global.f32 %f1, [%rd1+];
               |                              ^ expected an integer offset, found `]`
            k: st ret
        "#]],
    );
}

#[test]
fn unclosed_address() {
    check(
        r#"
.visible .entry k()
{
    ld.global.f32 %f1, [%rd1+4;
    ret;
}
"#,
        expect![[r#"
            4  |     ld.global.f32 %f1, [%rd1+4;
               |                               ^ expected `]`, found `;`
            k: ret
        "#]],
    );
}

#[test]
fn unclosed_vector() {
    check(
        r#"
.visible .entry k()
{
    ld.global.v2.f32 {%f1, %f2, [%rd1];
    ret;
}
"#,
        expect![[r#"
            4  |     ld.global.v2.f32 {%f1, %f2, [%rd1];
               |                                       ^ expected `,` or `}`, found `;`
            k: ret
        "#]],
    );
}

#[test]
fn broken_vector_operand_does_not_close_the_body() {
    check(
        r#"
.visible .entry k()
{
    mov.b64 {%r1 %r2}, %rd1;
    ret;
}
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            4  |     mov.b64 {%r1 %r2}, %rd1;
               |                  ^^^ expected `,` or `}`, found `%r2`
            k: ret
            k2: ret
        "#]],
    );
}

#[test]
fn unknown_directive_in_a_body() {
    check(
        r#"
.visible .entry k()
{
    .bogus 1;
    ret;
}
"#,
        expect![[r#"
            4  |     .bogus 1;
               |     ^^^^^^ expected an instruction or directive, found `.bogus`
            k: ret
        "#]],
    );
}

#[test]
fn register_declaration_without_count() {
    check(
        r#"
.visible .entry k()
{
    .reg .b32 %r<;
    .reg .b64 %rd<3>;
    ret;
}
"#,
        expect![[r#"
            4  |     .reg .b32 %r<;
               |                  ^ expected a register count, found `;`
            k: ret
        "#]],
    );
}

#[test]
fn register_declaration_without_type() {
    check(
        r#"
.visible .entry k()
{
    .reg %r<4>;
    ret;
}
"#,
        expect![[r#"
            4  |     .reg %r<4>;
               |     ^^^^^^^^^^^ register declaration has no type
            k: ret
        "#]],
    );
}

#[test]
fn guard_without_predicate() {
    check(
        r#"
.visible .entry k()
{
    @! bra $L1;
$L1:
    ret;
}
"#,
        expect![[r#"
            4  |     @! bra $L1;
               |        ^^^ expected a predicate register, found `bra`
            k: ret
        "#]],
    );
}

#[test]
fn stray_character_in_an_instruction() {
    check(
        r#"
.visible .entry k()
{
    add.s32 %r1, %r2, #3;
    ret;
}
"#,
        expect![[r#"
            4  |     add.s32 %r1, %r2, #3;
               |                       ^ expected an operand, found `#`
            k: ret
        "#]],
    );
}

#[test]
fn control_character_is_shown_escaped() {
    check(
        ".visible .entry k()\n{\n    mov.u32 %r1, \u{1};\n    ret;\n}\n",
        expect![[r#"
            3  |     mov.u32 %r1, ?;
               |                  ^ expected an operand, found `\u{1}`
            k: ret
        "#]],
    );
}

#[test]
fn non_ascii_character_in_an_instruction() {
    check(
        r#"
.visible .entry k()
{
    mov.u32 %r1, é;
    ret;
}
"#,
        expect![[r#"
            4  |     mov.u32 %r1, é;
               |                  ^^ expected an operand, found `é`
            k: ret
        "#]],
    );
}

#[test]
fn loc_without_numbers() {
    check(
        r#"
.visible .entry k()
{
    .loc 1
    ret;
}
"#,
        expect![[r#"
            5  |     ret;
               |     ^^^ expected a line number, found `ret`
            k: ret
        "#]],
    );
}

// ----- module level ----------------------------------------------------------------------------

#[test]
fn unknown_module_directive() {
    check(
        r#"
.bogus 1;
.visible .entry k()
{
    ret;
}
"#,
        expect![[r#"
            2  | .bogus 1;
               | ^^^^^^ expected a directive, found `.bogus`
            k: ret
        "#]],
    );
}

#[test]
fn stray_closing_brace_is_reported_once() {
    check(
        r#"
}
.visible .entry k()
{
    ret;
}
"#,
        expect![[r#"
            2  | }
               | ^ expected a directive, found `}`
            k: ret
        "#]],
    );
}

#[test]
fn bad_version() {
    check(
        r#".version x
.target sm_80
.address_size 64
.visible .entry k()
{
    ret;
}
"#,
        expect![[r#"
            1  | .version x
               |          ^ expected a version like `7.0`, found `x`
            k: ret
        "#]],
    );
}

#[test]
fn file_without_quotes() {
    check(
        r#"
.visible .entry k()
{
    ret;
}
.file 1 k.cu
.file 2 "b.cu"
"#,
        expect![[r#"
            6  | .file 1 k.cu
               |         ^ expected a file name, found `k`
            k: ret
        "#]],
    );
}

#[test]
fn broken_parameter_list_skips_its_body_and_keeps_the_next_kernel() {
    check(
        r#"
.visible .entry k(
    .param .u64 p
{
    ld.param.u64 %rd1, [p];
    ret;
}
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            4  | {
               | ^ expected `,` or `)`, found `{`
            k2: ret
        "#]],
    );
}

#[test]
fn parameter_without_name() {
    check(
        r#"
.visible .entry k(
    .param .u64 k_p0,
    .param .u64
)
{
    ret;
}
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            5  | )
               | ^ expected a parameter name, found `)`
            k2: ret
        "#]],
    );
}

#[test]
fn parameter_without_type() {
    check(
        r#"
.visible .entry k(
    .param k_p0
)
{
    ret;
}
"#,
        expect![[r#"
            3  |     .param k_p0
               |            ^^^^ parameter has no type
        "#]],
    );
}

#[test]
fn kernel_without_name() {
    check(
        r#"
.visible .entry ()
{
    ret;
}
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            2  | .visible .entry ()
               |                 ^ expected a function name, found `(`
            k2: ret
        "#]],
    );
}

#[test]
fn missing_closing_brace_before_the_next_kernel() {
    check(
        r#"
.visible .entry k()
{
    ret;

.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            6  | .visible .entry k2()
               | ^^^^^^^^ expected `}`, found `.visible`
            k: ret
            k2: ret
        "#]],
    );
}

#[test]
fn missing_closing_brace_at_end_of_file() {
    check(
        r#"
.visible .entry k()
{
    ret;
"#,
        expect![[r#"
            5  | 
               | | expected `}`, found end of file
            k: ret
        "#]],
    );
}

#[test]
fn module_variable_without_type() {
    check(
        r#"
.global .align 4 g[4];
.visible .entry k()
{
    ret;
}
"#,
        expect![[r#"
            2  | .global .align 4 g[4];
               |                  ^ variable has no type
            k: ret
        "#]],
    );
}

// ----- numbers ---------------------------------------------------------------------------------

#[test]
fn huge_numbers_are_out_of_range_not_wrapped() {
    check(
        r#"
.visible .entry k()
{
    .reg .b32 %r<4294967296>;
    mov.u32 %r1, 99999999999999999999999999999999999999999999999999;
    ld.global.u32 %r1, [%rd1+9223372036854775808];
    ld.global.u32 %r1, [%rd1+-9223372036854775808];
    .loc 1 99999999999 1
    mov.u32 %r2, 0x7fffffffffffffffffffffffffffffff;
    ret;
}
"#,
        expect![[r#"
            4  |     .reg .b32 %r<4294967296>;
               |                  ^^^^^^^^^^ integer out of range
            5  |     mov.u32 %r1, 99999999999999999999999999999999999999999999999999;
               |                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ integer out of range
            6  |     ld.global.u32 %r1, [%rd1+9223372036854775808];
               |                              ^^^^^^^^^^^^^^^^^^^ offset out of range
            8  |     .loc 1 99999999999 1
               |            ^^^^^^^^^^^ integer out of range
            k: ld mov ret
        "#]],
    );
}

#[test]
fn huge_numbers_keep_their_values() {
    let text = format!(
        "{HEADER}.visible .entry k()\n{{\n    mov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;\n    ld.global.u32 %r1, [%rd1+-9223372036854775808];\n    ld.global.u32 %r1, [%rd1+9223372036854775807];\n    mov.b64 %rd2, 0b{};\n    ret;\n}}\n",
        "1".repeat(64)
    );
    let parsed = parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let insts: Vec<_> = parsed.module.functions[0].instructions().collect();
    use ptx::{Immediate, Operand};
    assert_eq!(insts[0].operands[1], Operand::Imm(Immediate::Int(u64::MAX as i128)));
    assert!(matches!(&insts[1].operands[1], Operand::Address(a) if a.offset == i64::MIN));
    assert!(matches!(&insts[2].operands[1], Operand::Address(a) if a.offset == i64::MAX));
    assert_eq!(insts[3].operands[1], Operand::Imm(Immediate::Int(u64::MAX as i128)));
}

#[test]
fn huge_array_sizes_do_not_overflow() {
    let text = format!("{HEADER}.shared .align 4 .b8 s[4294967296][4294967296][4294967296];\n.visible .entry k()\n{{\n    ret;\n}}\n");
    let parsed = parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    assert_eq!(parsed.module.variables[0].size_bytes(), None);
}

// ----- unterminated strings and comments -------------------------------------------------------

#[test]
fn unterminated_string() {
    check(
        r#"
.visible .entry k()
{
    ret;
}
.file 1 "k.cu
.file 2 "b.cu"
"#,
        expect![[r#"
            6  | .file 1 "k.cu
               |         ^^^^^ expected a file name, found unterminated string
            k: ret
        "#]],
    );
}

#[test]
fn unterminated_block_comment_in_a_body() {
    check(
        r#"
.visible .entry k()
{
    ret; /* no end
}
"#,
        expect![[r#"
            4  |     ret; /* no end
               |          ^^^^^^^^^ (to line 6) expected an instruction, found unterminated comment
            6  | 
               | | expected `}`, found end of file
            k: ret
        "#]],
    );
}

#[test]
fn unterminated_block_comment_at_module_level() {
    check(
        r#"
.visible .entry k()
{
    ret;
}
/* no end
.visible .entry k2()
{
    ret;
}
"#,
        expect![[r#"
            6  | /* no end
               | ^^^^^^^^^ (to line 11) expected a directive, found unterminated comment
            k: ret
        "#]],
    );
}

// ----- whole files -----------------------------------------------------------------------------

#[test]
fn empty_and_blank_files() {
    for text in ["", " ", "\n\n\t \r\n", "\u{feff}", "\u{feff}\n"] {
        let parsed = parse(text);
        if text.trim().is_empty() {
            assert_eq!(parsed.errors.len(), 1, "{text:?}: {:?}", parsed.errors);
            assert_eq!(parsed.errors[0].message, "empty PTX file");
        } else {
            assert!(!parsed.errors.is_empty(), "{text:?}");
        }
        assert!(parsed.module.functions.is_empty());
    }
}

#[test]
fn comment_only_and_header_only_files() {
    check(
        "// nothing here\n",
        expect![[r#"
            2  | 
               | | no `.entry` or `.func` in the module
        "#]],
    );
    check(
        HEADER,
        expect![[r#"
            4  | 
               | | no `.entry` or `.func` in the module
        "#]],
    );
}

#[test]
fn one_line_garbage_file() {
    check(
        "hello world, this is not PTX {[(;\n",
        expect![[r#"
            1  | hello world, this is not PTX {[(;
               | ^^^^^ expected a directive, found `hello`
        "#]],
    );
}

#[test]
fn byte_order_mark_is_skipped() {
    check_bytes(
        format!("\u{feff}{HEADER}.visible .entry k()\n{{\n    ret;\n}}\n").as_bytes(),
        expect![[r#"
        k: ret
    "#]],
    );
}

#[test]
fn invalid_utf8_in_a_comment() {
    let mut bytes = format!("{HEADER}// a comment \n.visible .entry k()\n{{\n    ret;\n}}\n").into_bytes();
    let comment_end = HEADER.len() + "// a comment ".len();
    bytes.insert(comment_end, 0xff);
    check_bytes(
        &bytes,
        expect![[r#"
            4  | // a comment �
               |              ^^^ invalid UTF-8 at byte 57
            k: ret
        "#]],
    );
}

#[test]
fn invalid_utf8_in_an_instruction() {
    let text = format!("{HEADER}.visible .entry k()\n{{\n    mov.u32 %r1, X;\n    ret;\n}}\n");
    let mut bytes = text.into_bytes();
    let x = bytes.iter().position(|&b| b == b'X').unwrap();
    bytes[x] = 0xc3; // a lead byte without its continuation
    check_bytes(
        &bytes,
        expect![[r#"
            6  |     mov.u32 %r1, �;
               |                  ^^^ invalid UTF-8 at byte 83
            6  |     mov.u32 %r1, �;
               |                  ^^^ expected an operand, found `�`
            k: ret
        "#]],
    );
}

#[test]
fn invalid_utf8_in_a_real_kernel_keeps_the_kernel() {
    let original = std::fs::read(corpus().join("vector_add.ptx")).unwrap();
    let good = parse(std::str::from_utf8(&original).unwrap());
    let comment = original.windows(2).position(|w| w == b"//").unwrap();
    let mut bytes = original.clone();
    bytes.splice(comment + 2..comment + 2, [0xff, 0xfe]);
    let (text, parsed) = parse_bytes(&bytes);
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
    let e = &parsed.errors[0];
    assert_eq!(e.message, format!("invalid UTF-8 at byte {}", comment + 2));
    assert_eq!(&text[e.span.range()], "\u{fffd}");
    assert_eq!(parsed.module.functions.len(), good.module.functions.len());
    assert_eq!(parsed.module.functions[0].instructions().count(), good.module.functions[0].instructions().count());
}

#[test]
fn binary_garbage() {
    let mut rng = Rng(7);
    for len in [1, 2, 16, 1000, 100_000] {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let (text, parsed) = parse_bytes(&bytes);
        assert!(!parsed.errors.is_empty(), "{len} random bytes parsed without errors");
        for e in &parsed.errors {
            assert!(text.get(e.span.range()).is_some(), "bad span {:?}", e.span);
        }
    }
}

// ----- nesting ---------------------------------------------------------------------------------

#[test]
fn nested_operand_groups_are_bounded() {
    check(
        r#"
.visible .entry k()
{
    mov.b32 {{{{{{{{%r1}}}}}}}}, %r2;
    ret;
}
"#,
        expect![[r#"
            4  |     mov.b32 {{{{{{{{%r1}}}}}}}}, %r2;
               |                 ^ expected an operand, found `{`
            k: ret
        "#]],
    );
}

#[test]
fn deeply_nested_braces_do_not_overflow_the_stack() {
    let n = 200_000;
    // In operand position: recursive descent, bounded.
    let text = format!("{HEADER}.visible .entry k()\n{{\n    mov.b32 {}%r1;\n    ret;\n}}\n", "{".repeat(n));
    let parsed = parse(&text);
    assert_eq!(parsed.errors.len(), 1, "{:?}", parsed.errors);
    assert_eq!(parsed.module.functions[0].instructions().count(), 1);
    // Scopes in a body: balanced, flattened.
    let text = format!("{HEADER}.visible .entry k()\n{}\n    ret;\n{}\n", "{".repeat(n), "}".repeat(n));
    let parsed = parse(&text);
    assert!(parsed.errors.is_empty(), "{:?}", &parsed.errors[..1]);
    assert_eq!(parsed.module.functions[0].instructions().count(), 1);
    // Unbalanced scopes, and an initialiser that never closes.
    for text in [
        format!("{HEADER}.visible .entry k()\n{}\n    ret;\n", "{".repeat(n)),
        format!("{HEADER}{}\n", "}".repeat(n)),
        format!("{HEADER}.global .u32 x[1] = {}\n", "{".repeat(n)),
        format!("{HEADER}.visible .entry k({}\n", "(".repeat(n)),
        format!("{HEADER}.visible .entry k()\n{{\n    call.uni {}%r1;\n}}\n", "(".repeat(n)),
    ] {
        let parsed = parse(&text);
        assert!(!parsed.errors.is_empty());
        assert!(parsed.errors.len() <= 2, "{:?}", &parsed.errors[..3]);
    }
}

// ----- truncated files -------------------------------------------------------------------------

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// splitmix64: deterministic cut points without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn truncated_corpus_files() {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(corpus()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "ptx")).collect();
    files.sort();
    let mut rng = Rng(0x1a2b);
    let mut cuts = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let full = parse(std::str::from_utf8(&bytes).unwrap());
        assert!(full.errors.is_empty());
        for _ in 0..50 {
            let cut = (rng.next() % bytes.len() as u64) as usize;
            cuts += 1;
            let (text, parsed) = parse_bytes(&bytes[..cut]);
            for e in &parsed.errors {
                assert!(text.get(e.span.range()).is_some(), "{}@{cut}: bad span {:?}", path.display(), e.span);
            }
            // Cut inside a kernel (after its first byte, before its closing brace): an error.
            let inside = full.module.functions.iter().find(|f| (f.span.start as usize) < cut && cut < f.span.end as usize);
            if let Some(f) = inside {
                assert!(!parsed.errors.is_empty(), "{}: cut at {cut} inside `{}` gave no error", path.display(), f.name);
            }
            // Everything that ended before the cut reads exactly as in the whole file.
            for f in full.module.functions.iter().filter(|f| (f.span.end as usize) <= cut) {
                assert!(parsed.module.functions.contains(f), "{}: cut at {cut} changed `{}`", path.display(), f.name);
            }
            // And what was cut mid-way keeps every instruction that ended before the cut.
            if let Some(f) = inside {
                let complete: Vec<_> = f.instructions().filter(|i| (i.span.end as usize) <= cut).collect();
                if let Some(g) = parsed.module.functions.iter().find(|g| g.name == f.name) {
                    let got: Vec<_> = g.instructions().collect();
                    assert!(got.len() >= complete.len(), "{}: cut at {cut} lost instructions of `{}`", path.display(), f.name);
                    assert_eq!(&got[..complete.len()], &complete[..], "{}: cut at {cut}", path.display());
                } else {
                    // Only a cut inside the header loses the kernel.
                    let body = f.instructions().next().map_or(f.span.end, |i| i.span.start) as usize;
                    assert!(cut < body, "{}: cut at {cut} lost `{}`", path.display(), f.name);
                }
            }
        }
    }
    assert!(cuts >= 50 * 50, "only {cuts} cuts");
}

#[test]
fn every_prefix_of_a_small_kernel() {
    // All cut points of one small kernel, not just random ones.
    let text = std::fs::read_to_string(corpus().join("vector_add.ptx")).unwrap();
    let full = parse(&text);
    let f = &full.module.functions[0];
    for cut in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
        let parsed = parse(&text[..cut]);
        if (f.span.start as usize) < cut && cut < f.span.end as usize {
            assert!(!parsed.errors.is_empty(), "cut at {cut}");
        }
    }
}
