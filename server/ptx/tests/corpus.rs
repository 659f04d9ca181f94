//! Parser conformance on real compiler output: every PTX file of `tests/corpus` (clang-19, sm_80,
//! `-O2`) and `tests/corpus/extra` (`-O3`, sm_90) parses with zero errors, declares the kernels its
//! `.meta.toml` expects, and maps its instructions back to lines of its own `.cu` file.

use ptx::{FunctionKind, SourceMap};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Every `.ptx` of the corpus and of `extra/`, sorted.
fn ptx_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [corpus(), corpus().join("extra")] {
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 50, "corpus looks incomplete: {} PTX files", files.len());
    files
}

/// `extra/matmul_tiled.O3.ptx` and `matmul_tiled.ptx` both belong to `matmul_tiled`.
fn stem(p: &Path) -> String {
    let name = p.file_name().unwrap().to_str().unwrap();
    name.split('.').next().unwrap().to_string()
}

/// The kernels the `.meta.toml` of a corpus entry expects.
fn expected_kernels(stem: &str) -> Vec<String> {
    let path = corpus().join(format!("{stem}.meta.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let meta: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let expect = meta.get("expect").and_then(|e| e.as_array()).unwrap_or_else(|| panic!("{}: no [[expect]]", path.display()));
    expect.iter().map(|e| e["kernel"].as_str().expect("kernel name").to_string()).collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(corpus()).unwrap_or(p).display().to_string()
}

#[test]
fn every_corpus_file_parses_without_errors() {
    let mut failures = Vec::new();
    for path in ptx_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = ptx::parse(&text);
        for e in &parsed.errors {
            failures.push(format!("{}:{:?}: {} (at `{}`)", rel(&path), e.span, e.message, &text[e.span.range()]));
        }
        let m = &parsed.module;
        if m.version.is_none() || m.targets.is_empty() || m.address_size != Some(64) {
            failures.push(format!("{}: header not read: version {:?}, targets {:?}, address size {:?}", rel(&path), m.version, m.targets, m.address_size));
        }
        // The same file through the byte entry point gives the same result.
        let (text2, parsed2) = ptx::parse_bytes(text.as_bytes());
        assert_eq!(text2, text);
        assert_eq!(parsed2, parsed, "{}: parse_bytes differs from parse", rel(&path));
    }
    assert!(failures.is_empty(), "{} parse errors in the corpus:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_expected_kernel_has_its_entry_with_a_body() {
    let mut failures = Vec::new();
    for path in ptx_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = ptx::parse(&text);
        let entries: Vec<_> = parsed.module.functions.iter().filter(|f| f.kind == FunctionKind::Entry).collect();
        for kernel in expected_kernels(&stem(&path)) {
            match entries.iter().find(|f| f.name == kernel.as_str()) {
                None => {
                    failures.push(format!("{}: no `.entry {kernel}` (entries: {:?})", rel(&path), entries.iter().map(|f| f.name.as_str()).collect::<Vec<_>>()))
                }
                Some(f) => {
                    if f.body.is_none() || f.instructions().next().is_none() {
                        failures.push(format!("{}: `{kernel}` has no instructions", rel(&path)));
                    }
                    if !f.instructions().any(|i| i.opcode == "ret") {
                        failures.push(format!("{}: `{kernel}` has no `ret`", rel(&path)));
                    }
                    if text[f.name_span.range()] != kernel {
                        failures.push(format!("{}: name span of `{kernel}` covers `{}`", rel(&path), &text[f.name_span.range()]));
                    }
                    if !text[f.span.range()].trim_end().ends_with('}') {
                        failures.push(format!("{}: span of `{kernel}` does not end at its closing brace", rel(&path)));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn instruction_spans_cover_their_text() {
    for path in ptx_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = ptx::parse(&text);
        for f in &parsed.module.functions {
            let mut last_end = 0;
            for i in f.instructions() {
                let s = &text[i.span.range()];
                assert!(i.span.start >= last_end, "{}: `{}` overlaps the previous instruction", rel(&path), s);
                last_end = i.span.end;
                assert!(s.ends_with(';'), "{}: instruction span `{s}` does not end with `;`", rel(&path));
                let head = if i.guard.is_some() { s.split_whitespace().nth(1).unwrap_or("") } else { s };
                assert!(head.starts_with(i.opcode.as_str()), "{}: span `{s}` does not start with opcode `{}`", rel(&path), i.opcode);
            }
        }
    }
}

#[test]
fn source_map_resolves_every_loc_to_a_line_of_the_kernels_cu() {
    let mut failures = Vec::new();
    for path in ptx_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = ptx::parse(&text);
        let map = SourceMap::new(&parsed.module);
        let stem = stem(&path);
        let cu_name = format!("{stem}.cu");
        let cu = std::fs::read_to_string(corpus().join(&cu_name)).unwrap_or_else(|e| panic!("{cu_name}: {e}"));
        let cu_lines = cu.lines().count() as u32;
        // The kernel's own file is declared under its relative name.
        let own: Vec<_> = map.files().filter(|f| Path::new(f).file_name().is_some_and(|n| n == cu_name.as_str())).collect();
        if own.len() != 1 {
            failures.push(format!("{}: expected one `.file` for {cu_name}, found {:?}", rel(&path), map.files().collect::<Vec<_>>()));
            continue;
        }
        for f in parsed.module.functions.iter().filter(|f| f.kind == FunctionKind::Entry) {
            let mut mapped = 0;
            for i in f.instructions() {
                let Some(loc) = i.loc else { continue };
                let Some(file) = map.file_name(loc) else {
                    failures.push(format!("{}: `{}` has `.loc {}` of an undeclared file", rel(&path), &text[i.span.range()], loc.file));
                    continue;
                };
                if file != own[0] {
                    continue;
                }
                if loc.line == 0 {
                    assert_eq!(map.resolve(loc), None, "line 0 is compiler-generated and resolves to nothing");
                    continue;
                }
                if loc.line > cu_lines {
                    failures.push(format!("{}: `{}` maps to {cu_name}:{} but the file has {cu_lines} lines", rel(&path), &text[i.span.range()], loc.line));
                }
                assert_eq!(map.resolve(loc), Some((file, loc.line)));
                mapped += 1;
            }
            if mapped == 0 {
                failures.push(format!("{}: no instruction of `{}` maps to a line of {cu_name}", rel(&path), f.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_loc_directive_names_a_declared_file() {
    // Checked on the text as well, so that a `.loc` the parser dropped cannot hide a bad index.
    for path in ptx_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = ptx::parse(&text);
        let declared: Vec<u32> = parsed.module.files.iter().map(|f| f.index).collect();
        let mut locs = 0;
        for line in text.lines() {
            let mut words = line.split_whitespace();
            if words.next() != Some(".loc") {
                continue;
            }
            locs += 1;
            let index: u32 = words.next().and_then(|w| w.parse().ok()).unwrap_or_else(|| panic!("{}: bad `{line}`", rel(&path)));
            assert!(declared.contains(&index), "{}: `{}` names file {index}, declared: {declared:?}", rel(&path), line.trim());
        }
        assert!(locs > 0, "{}: no `.loc` directives", rel(&path));
        let with_loc = parsed.module.functions.iter().flat_map(|f| f.instructions()).filter(|i| i.loc.is_some()).count();
        assert!(with_loc > 0, "{}: no instruction carries a `.loc`", rel(&path));
    }
}
