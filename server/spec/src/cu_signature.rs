//! Parameter names from a kernel's `.cu` signature, so that `lark.toml` can say `n` rather than
//! `reduce_param_2`. PTX keeps only positional names.

/// One parameter of a kernel's `.cu` signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuParam {
    pub name: String,
    /// Declared with a `*` or as an array (which decays to a pointer).
    pub is_pointer: bool,
    /// The declared type, without the name (`const soft_max_params`, `const float*`).
    pub ty: String,
}

/// The parameter names of `kernel` (its source identifier) in `cu`, in order.
pub fn cu_param_names(cu: &str, kernel: &str) -> Option<Vec<String>> {
    cu_params(cu, kernel).map(|ps| ps.into_iter().map(|p| p.name).collect())
}

/// The parameters of `kernel` (its source identifier) in `cu`, in order: names, and which are
/// pointers (what the interface may describe as buffers).
pub fn cu_params(cu: &str, kernel: &str) -> Option<Vec<CuParam>> {
    let bytes = cu.as_bytes();
    let mut search = 0;
    while let Some(pos) = cu[search..].find(kernel) {
        let start = search + pos;
        search = start + kernel.len();
        let before_ok = start == 0 || !is_ident(bytes[start - 1]);
        let after = cu[search..].trim_start();
        if !before_ok || !after.starts_with('(') {
            continue;
        }
        // Only a definition or declaration marked as a kernel counts.
        let line_start = cu[..start].rfind([';', '}']).map_or(0, |p| p + 1);
        if !cu[line_start..start].contains("__global__") {
            continue;
        }
        let open = cu.len() - after.len();
        let mut depth = 0;
        let mut end = None;
        for (i, c) in cu[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let inner = &cu[open + 1..end?];
        let mut names = Vec::new();
        let mut depth = 0;
        let mut cur = String::new();
        for c in inner.chars().chain(std::iter::once(',')) {
            match c {
                '(' | '<' | '[' => {
                    depth += 1;
                    cur.push(c)
                }
                ')' | '>' | ']' => {
                    depth -= 1;
                    cur.push(c)
                }
                ',' if depth == 0 => {
                    let decl = cur.split('=').next().unwrap_or("").trim().to_string();
                    cur.clear();
                    if decl.is_empty() || decl == "void" {
                        continue;
                    }
                    let is_array = decl.contains('[');
                    let decl = decl.split('[').next().unwrap_or("").trim_end();
                    let name: String = decl.chars().rev().take_while(|c| is_ident(*c as u8)).collect::<Vec<_>>().into_iter().rev().collect();
                    let ty = decl[..decl.len() - name.len()].trim().to_string();
                    let is_pointer = is_array || ty.contains('*');
                    names.push(CuParam { name, is_pointer, ty });
                }
                _ => cur.push(c),
            }
        }
        return Some(names);
    }
    None
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parameter_names() {
        let cu = "// reduce(x)\nextern \"C\" __global__ void reduce(const float* __restrict__ in,\n  float *out, int n) { }";
        assert_eq!(cu_param_names(cu, "reduce").unwrap(), vec!["in", "out", "n"]);
        let t = "template <int B> __global__ void block_max(const float* x, float* y, int n) {}";
        assert_eq!(cu_param_names(t, "block_max").unwrap(), vec!["x", "y", "n"]);
        assert_eq!(cu_param_names("__device__ void f(int a) {}", "f"), None);
    }

    #[test]
    fn knows_which_parameters_are_pointers() {
        let cu = "__global__ void k(const float* __restrict__ x, int n, float y[], size_t m, half *h) {}";
        let pointers: Vec<(String, bool)> = cu_params(cu, "k").unwrap().into_iter().map(|p| (p.name, p.is_pointer)).collect();
        let want = [("x", true), ("n", false), ("y", true), ("m", false), ("h", true)];
        assert_eq!(pointers, want.map(|(n, p)| (n.to_string(), p)));
    }
}
