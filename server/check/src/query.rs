//! Building two-thread queries: geometry, interface facts and the per-thread copies of the
//! symbols a formula mentions, and reading a counterexample back out of the solver's model.

use crate::bind::{Binding, ByteSize};
use crate::encode::{bv, sym_name, Encoder, ExtraNarrowing, Narrow};
use crate::row_major::Split;
use model::expr::{ExprId, Exprs, Sym};
use model::ops::Special;
use spec::{ParamSpec, Scalar};

pub struct Query<'a> {
    pub enc: Encoder<'a>,
    pub asserts: Vec<String>,
    /// Names whose values a counterexample reports.
    pub wanted: Vec<String>,
    /// The row-major indices the index lemmas relate (see [`Query::index_abstraction`]).
    index_terms: Vec<(String, u64)>,
    /// Upper bounds of the launch's grid and block, per dimension (for lemmas stated later).
    grid_hi: [u64; 3],
    block_hi: [u64; 3],
    /// How many of the block's and the grid's dimensions may be larger than 1 (trailing ones
    /// of size exactly 1 do not count): 1, 2 or 3.
    block_dims: usize,
    grid_dims: usize,
}

/// A concrete thread: block and thread indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ThreadId {
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

impl std::fmt::Display for ThreadId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [b0, b1, b2] = self.block;
        let [t0, t1, t2] = self.thread;
        write!(f, "({b0},{b1},{b2})/({t0},{t1},{t2})")
    }
}

const DIMS: [&str; 3] = ["x", "y", "z"];

impl<'a> Query<'a> {
    /// A query over `threads` thread copies (1 or 2) with the launch and interface facts.
    pub fn new(x: &'a Exprs, bind: &Binding, threads: u8) -> Query<'a> {
        let mut q = Query {
            enc: Encoder::new(x),
            asserts: Vec::new(),
            wanted: Vec::new(),
            index_terms: Vec::new(),
            grid_hi: bind.grid.map(|d| d.hi),
            block_hi: bind.block.map(|d| d.hi),
            block_dims: dims_used(&bind.block),
            grid_dims: dims_used(&bind.grid),
        };
        q.narrow_known_ranges(bind, threads);
        for d in 0..3 {
            let ntid = q.enc.sym(Sym::Special(Special::Ntid(d)), 32, 0);
            let nctaid = q.enc.sym(Sym::Special(Special::Nctaid(d)), 32, 0);
            q.range(&ntid, bind.block[d as usize].lo, bind.block[d as usize].hi);
            q.range(&nctaid, bind.grid[d as usize].lo, bind.grid[d as usize].hi);
            q.wanted.push(ntid.clone());
            q.wanted.push(nctaid.clone());
            for t in 1..=threads {
                let tid = q.enc.sym(Sym::Special(Special::Tid(d)), 32, t);
                let ctaid = q.enc.sym(Sym::Special(Special::Ctaid(d)), 32, t);
                q.asserts.push(format!("(bvult {tid} {ntid})"));
                q.asserts.push(format!("(bvult {ctaid} {nctaid})"));
                q.wanted.push(tid);
                q.wanted.push(ctaid);
            }
        }
        q.tie_launch_to_scalars(bind);
        // At most 1024 threads per block (fewer under `__launch_bounds__`).
        q.asserts.push(format!("(bvule {} {})", q.block_threads(), bv(bind.max_threads.min(1024), 32)));
        if bind.whole_warps {
            q.asserts.push(format!("(= (bvurem {} {}) {})", q.block_threads(), bv(32, 32), bv(0, 32)));
        }
        if threads == 2 {
            q.global_index_lemmas(bind);
        }
        q
    }

    /// The global index `ctaid * ntid + tid` along a dimension is injective: two threads with
    /// the same index have the same block and thread ids. True of the integers because
    /// `tid < ntid`, and of 32-bit words when `ctaid * ntid + tid` cannot wrap, that is when
    /// `nctaid * ntid <= 2^32` for every launch the query allows. Solvers cannot find this
    /// themselves once the block size is unknown (the product is nonlinear): with it, the most
    /// common access pattern of all, `a[blockIdx.x * blockDim.x + threadIdx.x]`, is decided in
    /// milliseconds instead of timing out. Stated as an implication over the very terms the
    /// kernel computes (solvers normalise the order of `bvadd`/`bvmul` operands).
    fn global_index_lemmas(&mut self, bind: &Binding) {
        for (d, dim) in DIMS.iter().enumerate() {
            let (grid, block) = (bind.grid[d].hi as u128, bind.block[d].hi as u128);
            if block <= 1 || grid * block > 1u128 << 32 {
                continue;
            }
            let index = |t: u8| format!("(bvadd (bvmul ctaid_{dim}_{t} ntid_{dim}) tid_{dim}_{t})");
            self.asserts.push(format!("(=> (= {} {}) (and (= ctaid_{dim}_1 ctaid_{dim}_2) (= tid_{dim}_1 tid_{dim}_2)))", index(1), index(2)));
        }
    }

    /// Declares the launch's ids and sizes and the interface's scalar parameters with the bits
    /// their ranges need (see [`Narrow`]): every launch the query considers stays within the
    /// geometry's bounds and the parameters' declared values and ranges.
    fn narrow_known_ranges(&mut self, bind: &Binding, threads: u8) {
        for d in 0..3u8 {
            let (block, grid) = (bind.block[d as usize], bind.grid[d as usize]);
            self.enc.narrow(&sym_name(Sym::Special(Special::Ntid(d)), 0), Narrow::unsigned_max(block.hi.into()));
            self.enc.narrow(&sym_name(Sym::Special(Special::Nctaid(d)), 0), Narrow::unsigned_max(grid.hi.into()));
            for t in 1..=threads {
                // An id is below its size, which is at most `hi` (and at least 1).
                self.enc.narrow(&sym_name(Sym::Special(Special::Tid(d)), t), Narrow::unsigned_max(block.hi.saturating_sub(1).into()));
                self.enc.narrow(&sym_name(Sym::Special(Special::Ctaid(d)), t), Narrow::unsigned_max(grid.hi.saturating_sub(1).into()));
            }
        }
        for (index, spec) in bind.params.iter().enumerate() {
            let narrow = match spec {
                Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. }) => Narrow::signed_range(*v, *v),
                Some(ParamSpec::Scalar { range: Some((lo, hi)), .. }) if *lo >= 0 => Narrow::unsigned_max(*hi as u128),
                Some(ParamSpec::Scalar { range: Some((lo, hi)), .. }) => Narrow::signed_range(*lo, *hi),
                _ => continue,
            };
            self.enc.narrow(&sym_name(Sym::Param { index: index as u32, offset: 0 }, 0), narrow);
        }
    }

    /// Launch dimensions given as expressions of scalars equal their expressions' values
    /// (see [`Binding::launch_exprs`]). Only where every scalar the expression names is a
    /// parameter whose declared range is non-negative: the encoding's unsigned division is then
    /// the interface's floor division.
    fn tie_launch_to_scalars(&mut self, bind: &Binding) {
        for (is_grid, d, e) in &bind.launch_exprs {
            let dim = if *is_grid { Special::Nctaid(*d as u8) } else { Special::Ntid(*d as u8) };
            let range = if *is_grid { bind.grid[*d] } else { bind.block[*d] };
            if range.value().is_some() {
                continue;
            }
            let Some(term) = self.size_expr_term(bind, e) else { continue };
            let name = self.enc.sym(Sym::Special(dim), 32, 0);
            self.asserts.push(format!("(= ((_ zero_extend 32) {name}) {term})"));
            for n in e.names() {
                if let Some(index) = bind.param_index(&n) {
                    self.param_fact(self.enc.exprs(), bind, index);
                }
            }
        }
    }

    /// A size expression as a 64-bit term over the scalar parameters it names; `None` when a
    /// name is not a parameter with a non-negative declared range.
    fn size_expr_term(&mut self, bind: &Binding, e: &spec::SizeExpr) -> Option<String> {
        use spec::{BinOp as B, ExprKind, Func};
        Some(match &e.kind {
            ExprKind::Int(v) => bv(u64::try_from(*v).ok()?, 64),
            ExprKind::Name(n) => {
                let index = bind.param_index(n)?;
                let non_negative = match bind.params.get(index as usize)?.as_ref()? {
                    ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. } => *v >= 0,
                    ParamSpec::Scalar { range: Some((lo, _)), .. } => *lo >= 0,
                    _ => false,
                };
                if !non_negative {
                    return None;
                }
                let s = Sym::Param { index, offset: 0 };
                let bits = self.enc.exprs().find_var(s).map_or(32, |(_, b)| b.clamp(1, 64));
                let name = self.enc.sym(s, bits, 0);
                if bits < 64 {
                    format!("((_ zero_extend {}) {name})", 64 - bits)
                } else {
                    name
                }
            }
            ExprKind::Neg(_) => return None,
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.size_expr_term(bind, a)?, self.size_expr_term(bind, b)?);
                let f = match op {
                    B::Add => "bvadd",
                    B::Sub => "bvsub",
                    B::Mul => "bvmul",
                    B::Div => "bvudiv",
                    B::Rem => "bvurem",
                };
                format!("({f} {a} {b})")
            }
            ExprKind::Call(f, a, b) => {
                let (a, b) = (self.size_expr_term(bind, a)?, self.size_expr_term(bind, b)?);
                match f {
                    Func::CeilDiv => format!("(bvudiv (bvadd {a} (bvsub {b} {})) {b})", bv(1, 64)),
                    Func::Min => format!("(ite (bvult {a} {b}) {a} {b})"),
                    Func::Max => format!("(ite (bvult {a} {b}) {b} {a})"),
                }
            }
        })
    }

    fn range(&mut self, name: &str, lo: u64, hi: u64) {
        if lo == hi {
            self.asserts.push(format!("(= {name} {})", bv(lo, 32)));
        } else {
            self.asserts.push(format!("(bvule {} {name})", bv(lo, 32)));
            self.asserts.push(format!("(bvule {name} {})", bv(hi, 32)));
        }
    }

    /// Constrains the scalar parameters the formulas mention to the interface's values/ranges.
    /// Call after all terms are encoded.
    pub fn add_param_facts(&mut self, x: &Exprs, bind: &Binding, used: &[ExprId]) {
        let mut seen = std::collections::HashSet::new();
        for &e in used {
            for s in x.symbols(e) {
                let Sym::Param { index, offset } = s else { continue };
                if !seen.insert((index, offset)) {
                    continue;
                }
                if offset == 0 && bind.declared_field(index, 0).is_none() {
                    self.param_fact(x, bind, index);
                } else {
                    self.field_fact(x, bind, index, offset);
                }
            }
        }
    }

    /// Constrains a field of a struct passed by value to the range the interface declares
    /// (a field with a value is a constant of the formulas already: see `Binding::known_values`).
    fn field_fact(&mut self, x: &Exprs, bind: &Binding, index: u32, offset: u32) {
        let Some(crate::bind::DeclaredField { range: Some((lo, hi)), .. }) = bind.declared_field(index, offset) else { return };
        let sym = Sym::Param { index, offset };
        let Some((_, bits)) = x.find_var(sym) else { return };
        let name = sym_name(sym, 0);
        self.wanted.push(name.clone());
        let (le, ge) = if *lo < 0 { ("bvsle", "bvsge") } else { ("bvule", "bvuge") };
        self.asserts.push(format!("({ge} {name} {})", bv(*lo as u64, bits)));
        self.asserts.push(format!("({le} {name} {})", bv(*hi as u64, bits)));
    }

    /// Constrains the scalar a buffer's size is given by (`len = "rows"`) to its declared value
    /// or range: a size term names the scalar even where no formula does, and without its fact
    /// the solver sized the buffer with a value the interface excludes (`rows = 0`).
    pub fn add_size_facts(&mut self, x: &Exprs, bind: &Binding, size: &ByteSize) {
        if let ByteSize::ParamTimes { param, .. } = size {
            self.param_fact(x, bind, *param);
        }
    }

    fn param_fact(&mut self, x: &Exprs, bind: &Binding, index: u32) {
        let name = sym_name(Sym::Param { index, offset: 0 }, 0);
        // Find the width the symbol was declared with.
        let bits = x.find_var(Sym::Param { index, offset: 0 }).map_or(32, |(_, b)| b);
        self.wanted.push(name.clone());
        match bind.params.get(index as usize).and_then(|p| p.as_ref()) {
            Some(ParamSpec::Scalar { value: Some(Scalar::Int(v)), .. }) => {
                self.asserts.push(format!("(= {name} {})", bv(*v as u64, bits)));
            }
            Some(ParamSpec::Scalar { range: Some((lo, hi)), .. }) => {
                let signed = *lo < 0;
                let (le, ge) = if signed { ("bvsle", "bvsge") } else { ("bvule", "bvuge") };
                self.asserts.push(format!("({ge} {name} {})", bv(*lo as u64, bits)));
                self.asserts.push(format!("({le} {name} {})", bv(*hi as u64, bits)));
            }
            _ => {}
        }
    }

    /// Grid-stride loops: `i = G + k * S` with `G = ctaid*ntid + tid` and `S = ntid*nctaid` (the
    /// grid's thread count). Two threads (or iterations) with the same `i` have the same `G` and
    /// the same `k`: division by `S` is unique because `0 <= G < S`. The lemma is stated under
    /// the lifter's own no-overflow facts of both copies (`sext(i) == sext(G) + zext(k)*sext(S)`,
    /// in 64 bits where nothing wraps: `zext(k) < 2^32`, `S <= 2^31`), so it adds no assumption;
    /// `G < S` holds when the grid's thread count fits 31 bits. Solvers cannot find it (the
    /// products are nonlinear): with it a grid-stride loop without a lark.toml is decided instead
    /// of timing out. Call after every term of the query is encoded.
    pub fn add_stride_lemmas(&mut self, x: &Exprs, bind: &Binding) {
        for (e, _) in self.enc.encoded().into_iter().filter(|(_, t)| *t == 1) {
            // The lifter's no-overflow fact of the induction variable, `sext(i) == sext(G) +
            // zext(k)*sext(S)`: under it the 32-bit `i` is the integer `G + k*S` too.
            let fact = match x.node(e) {
                model::expr::Node::Cmp { op: model::ops::CmpOp::Eq, a, b } => {
                    let (a, b) = (*a, *b);
                    let narrow = |v: ExprId| match x.node(v) {
                        model::expr::Node::Ext { a, from: 32, to: 64, signed: true } => Some(*a),
                        _ => None,
                    };
                    match (grid_stride(x, a), narrow(b), grid_stride(x, b), narrow(a)) {
                        (Some(s), Some(i), _, _) | (_, _, Some(s), Some(i)) => Some((s, i)),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(((g, k, d), i)) = fact else { continue };
            let (grid, block) = (bind.grid[d as usize].hi as u128, bind.block[d as usize].hi as u128);
            if grid * block > 1u128 << 31 {
                continue;
            }
            let (f1, f2) = (self.enc.term(e, 1), self.enc.term(e, 2));
            let (i1, i2) = (self.enc.term(i, 1), self.enc.term(i, 2));
            let (g1, g2) = (self.enc.term(g, 1), self.enc.term(g, 2));
            let (k1, k2) = (self.enc.term(k, 1), self.enc.term(k, 2));
            self.asserts.push(format!("(=> (and (= {i1} {i2}) {f1} {f2}) (and (= {g1} {g2}) (= {k1} {k2})))"));
        }
    }

    /// Row-major indices. A byte offset that reads `g * (A * B + C)` (see [`crate::row_major`]:
    /// `4 * sext(y * w + x)`, unrolled copies `+ 32 * w`, pointer increments `+ 4096 * k`, 64-bit
    /// row strides) names the same element in two threads with `0 <= C < B` in both only for
    /// the same `A` and the same `C`, because division by `B` is unique. That holds when the
    /// index arithmetic does not wrap around, which C++ leaves undefined and compilers assume
    /// (the lemma is exactly that assumption, used only here; the report says so). Solvers
    /// cannot find it themselves (the product is nonlinear once `B` is a parameter): with it,
    /// `out[y * w + x]` guarded by `x < w` is decided instead of timing out. Stated for every
    /// pair of readings of thread 1's offset `o1` and thread 2's `o2` with the same stride;
    /// returns how many lemmas were stated.
    pub fn add_index_lemmas(&mut self, x: &Exprs, o1: ExprId, o2: ExprId) -> usize {
        let (r1, r2) = (crate::row_major::readings(x, o1), crate::row_major::readings(x, o2));
        let (e1, e2) = (self.enc.term(o1, 1), self.enc.term(o2, 2));
        // An offset with selects is read on each path through them: a lemma holds where both
        // offsets take the paths it was read on, which its premise says.
        let mut added = 0;
        'pairs: for p in &r1 {
            for q in &r2 {
                if added >= MAX_ROW_MAJOR_LEMMAS {
                    break 'pairs;
                }
                let mut on_paths = self.path_terms(&p.path, 1);
                on_paths.extend(self.path_terms(&q.path, 2));
                added += self.row_major_lemmas(x, (&e1, &e2), (&p.splits, &q.splits), ROW_MAJOR_DEPTH, &on_paths, MAX_ROW_MAJOR_LEMMAS - added);
            }
        }
        if added > 0 {
            for (name, scale) in [(&e1, crate::row_major::scale_of(&r1)), (&e2, crate::row_major::scale_of(&r2))] {
                if !self.index_terms.iter().any(|(n, _)| n == name) {
                    self.index_terms.push((name.clone(), scale));
                }
            }
            self.add_mixed_index_lemmas(x);
        }
        added
    }

    /// The conditions of `path` in thread copy `t`, each as the value it takes there.
    pub(crate) fn path_terms(&mut self, path: &[(ExprId, bool)], t: u8) -> Vec<String> {
        path.iter()
            .map(|&(c, taken)| {
                let term = self.enc.term(c, t);
                if taken {
                    term
                } else {
                    format!("(not {term})")
                }
            })
            .collect()
    }

    /// States the row-major lemma for each pair of readings of `e1` (thread 1) and `e2`
    /// (thread 2) with the same stride, and again for their rows and columns, `depth` levels
    /// down: a row that is itself row-major (`blockIdx.x * warps_per_block + warp` inside
    /// `row * C + col`) needs the lemma once more before the solver can tell two rows apart.
    /// Each lemma's premise includes `on_paths` (the selects' ways the readings were read on).
    /// The level stops once `room` lemmas (its own and its sub-levels') are stated.
    fn row_major_lemmas(&mut self, x: &Exprs, (e1, e2): (&str, &str), (s1, s2): (&[Split], &[Split]), depth: u32, on_paths: &[String], room: usize) -> usize {
        let zero = bv(0, 64);
        let paths: String = on_paths.iter().map(|c| format!(" {c}")).collect();
        let mut added = 0;
        for p in s1.iter().take(MAX_ROW_MAJOR_SPLITS) {
            for q in s2.iter().take(MAX_ROW_MAJOR_SPLITS).filter(|q| q.stride == p.stride && q.scale == p.scale) {
                if added >= room {
                    return added;
                }
                let (b1, b2) = (self.factor_term(x, &p.stride, 1), self.factor_term(x, &q.stride, 2));
                let (a1, a2) = (self.sum_of(x, &p.multiple, 1), self.sum_of(x, &q.multiple, 2));
                let (rest1, rest2) = crate::row_major::columns_past_common_base(p, q);
                let (c1, c2) = (self.sum_of(x, &rest1, 1), self.sum_of(x, &rest2, 2));
                // A stride met widened both ways is one value only when it is non-negative.
                let mut signs = String::new();
                if p.both_widenings || q.both_widenings {
                    let narrow = bv(0, x.bits(p.stride.e));
                    for t in [1, 2] {
                        signs.push_str(&format!(" (bvsle {narrow} {})", self.enc.term(p.stride.e, t)));
                    }
                }
                self.asserts.push(format!(
                    "(=> (and{paths} (= {e1} {e2}) (= {b1} {b2}) (bvsle {zero} {c1}) (bvslt {c1} {b1}) (bvsle {zero} {c2}) (bvslt {c2} {b2}){signs}) (and (= {a1} {a2}) (= {c1} {c2})))"
                ));
                added += 1;
                if depth > 1 {
                    // The row and the column are equal too: either can be row-major itself (a
                    // column `threadIdx.x + k * blockDim.x` of a block-stride loop).
                    for ((m1, m2), (t1, t2)) in [((&p.multiple, &q.multiple), (&a1, &a2)), ((&rest1, &rest2), (&c1, &c2))] {
                        let (r1, r2) = (crate::row_major::splits_of(x, m1), crate::row_major::splits_of(x, m2));
                        added += self.row_major_lemmas(x, (t1, t2), (&r1, &r2), depth - 1, on_paths, MAX_ROW_MAJOR_LEMMAS);
                    }
                }
            }
        }
        added
    }

    /// A factor of a row-major reading in thread copy `t`, widened to 64 bits.
    pub(crate) fn factor_term(&mut self, x: &Exprs, f: &crate::row_major::Factor, t: u8) -> String {
        use crate::row_major::Widen;
        let term = self.enc.term(f.e, t);
        let bits = x.bits(f.e);
        match f.widen {
            Widen::Signed if bits < 64 => format!("((_ sign_extend {}) {term})", 64 - bits),
            Widen::Unsigned if bits < 64 => format!("((_ zero_extend {}) {term})", 64 - bits),
            _ => term,
        }
    }

    /// The 64-bit sum of `monomials` in thread copy `t`.
    pub(crate) fn sum_of(&mut self, x: &Exprs, monomials: &[crate::row_major::Monomial], t: u8) -> String {
        let mut terms = Vec::new();
        for m in monomials {
            let mut parts: Vec<String> = m.factors.iter().map(|f| self.factor_term(x, f, t)).collect();
            if m.coeff != 1 || parts.is_empty() {
                parts.insert(0, bv(m.coeff as i64 as u64, 64));
            }
            terms.push(if parts.len() == 1 { parts.swap_remove(0) } else { format!("(bvmul {})", parts.join(" ")) });
        }
        match terms.len() {
            0 => bv(0, 64),
            1 => terms.swap_remove(0),
            _ => format!("(bvadd {})", terms.join(" ")),
        }
    }

    /// `ctaid_d * ntid_e + tid_e` with `d != e` (a row per `threadIdx.y` in blocks counted
    /// along x, as `blockIdx.x * blockDim.y + threadIdx.y`) is injective like the per-dimension
    /// global index of [`Query::global_index_lemmas`], when the product cannot wrap. Stated
    /// only for the pairs the query's terms contain.
    fn add_mixed_index_lemmas(&mut self, x: &Exprs) {
        let mut pairs = Vec::new();
        for (e, t) in self.enc.encoded() {
            if t == 1 {
                if let Some((d, e)) = mixed_global_index(x, e) {
                    if !pairs.contains(&(d, e)) {
                        pairs.push((d, e));
                    }
                }
            }
        }
        for (d, e) in pairs {
            let (grid, block) = (self.grid_hi[d as usize] as u128, self.block_hi[e as usize] as u128);
            if grid * block > 1u128 << 32 {
                continue;
            }
            let (cd, te) = (DIMS[d as usize], DIMS[e as usize]);
            let index = |t: u8| format!("(bvadd (bvmul ctaid_{cd}_{t} ntid_{te}) tid_{te}_{t})");
            self.asserts.push(format!("(=> (= {} {}) (and (= ctaid_{cd}_1 ctaid_{cd}_2) (= tid_{te}_1 tid_{te}_2)))", index(1), index(2)));
        }
    }

    /// Whether the query has row-major index lemmas (and so an [`Query::index_abstraction`]).
    pub fn has_index_lemmas(&self) -> bool {
        !self.index_terms.is_empty()
    }

    /// The query with the row-major offsets' definitions dropped (each becomes a free value,
    /// still a multiple of its element size), keeping the index lemmas that relate them to
    /// their rows and columns: a weaker query, so `unsat` here is `unsat` for the query itself.
    /// It spares the solver the products `A*B`, which it cannot reason about quickly; `None`
    /// without index lemmas.
    pub fn index_abstraction(&self) -> Option<Result<::smt::Query, String>> {
        if self.index_terms.is_empty() {
            return None;
        }
        let mut script = String::new();
        for line in self.script().lines() {
            match self.index_terms.iter().find(|(n, _)| line.starts_with(&format!("(define-fun {n} () (_ BitVec 64) "))) {
                Some((n, scale)) => {
                    script.push_str(&format!("(declare-fun {n} () (_ BitVec 64))\n"));
                    let low = scale.trailing_zeros();
                    if low > 0 && scale.is_power_of_two() {
                        script.push_str(&format!("(assert (= ((_ extract {} 0) {n}) (_ bv0 {low})))\n", low - 1));
                    }
                }
                None => {
                    script.push_str(line);
                    script.push('\n');
                }
            }
        }
        Some(crate::smt::read_query(&script))
    }

    /// Thread `t`'s linear index in its block (`thread_rank()`), spelled without the
    /// dimensions of size 1.
    pub fn linear_tid(&self, t: u8) -> String {
        match self.block_dims {
            1 => format!("tid_x_{t}"),
            2 => format!("(bvadd tid_x_{t} (bvmul ntid_x tid_y_{t}))"),
            _ => format!("(bvadd tid_x_{t} (bvmul ntid_x (bvadd tid_y_{t} (bvmul ntid_y tid_z_{t}))))"),
        }
    }

    /// The number of threads in a block, spelled without the dimensions of size 1.
    pub fn block_threads(&self) -> &'static str {
        match self.block_dims {
            1 => "ntid_x",
            2 => "(bvmul ntid_x ntid_y)",
            _ => "(bvmul ntid_x (bvmul ntid_y ntid_z))",
        }
    }

    /// The query with each thread's linear index in its block, each block's in the grid, and
    /// the block's thread count as free values (see [`crate::thread_rank`]): a weaker query;
    /// `None` when it has none of them (in a one-dimensional block the index is `tid.x`).
    /// The second value says whether a refutation may rely on the grid's linear block index
    /// not wrapping around (a grid of more than 2^32 blocks; see
    /// [`crate::thread_rank::Abstraction::relates_blocks`]).
    pub fn thread_rank_abstraction(&self) -> Option<(Result<::smt::Query, String>, bool)> {
        let ranks: Vec<(String, crate::thread_rank::Rank, u8)> = self
            .enc
            .encoded()
            .into_iter()
            .filter_map(|(e, t)| {
                let kind = crate::thread_rank::linear_index(self.enc.exprs(), e, self.block_dims, self.grid_dims)?;
                // A rank is per thread copy, the thread count shared.
                ((t > 0) == (kind != crate::thread_rank::Rank::BlockThreads)).then_some(())?;
                Some((self.enc.defined_name(e, t)?.to_string(), kind, t))
            })
            .collect();
        let spelled: Vec<(String, u8)> = if self.block_dims > 1 { vec![(self.linear_tid(1), 1), (self.linear_tid(2), 2)] } else { vec![] };
        let abstraction = crate::thread_rank::abstract_script(&self.script(), &ranks, &spelled, self.block_threads())?;
        let blocks = self.grid_hi.iter().map(|&d| u128::from(d)).product::<u128>();
        Some((crate::smt::read_query(&abstraction.script), abstraction.relates_blocks && blocks > 1u128 << 32))
    }

    /// `(bvugt end size)`-style term for a buffer's size in bytes (64-bit).
    pub fn size_term(&mut self, x: &Exprs, size: &ByteSize) -> String {
        match size {
            ByteSize::Fixed(n) => bv(*n, 64),
            ByteSize::ParamTimes { param, elem_bytes } => {
                let s = Sym::Param { index: *param, offset: 0 };
                let bits = x.find_var(s).map_or(32, |(_, b)| b.max(1));
                let name = self.enc.sym(s, bits, 0);
                let wide = if bits < 64 { format!("((_ zero_extend {}) {name})", 64 - bits) } else { name };
                format!("(bvmul {wide} {})", bv(*elem_bytes, 64))
            }
        }
    }

    pub fn want(&mut self, name: String) {
        if !self.wanted.contains(&name) {
            self.wanted.push(name);
        }
    }

    /// The query as SMT-LIB text: declarations, definitions, assertions and a `get-value` of
    /// the wanted names.
    pub fn script(&self) -> String {
        self.script_narrowed(&ExtraNarrowing::new())
    }

    /// [`Query::script`] with the constants of `extra` declared narrower (a witness tier's
    /// small values; see [`Encoder::script_narrowed`]). Constants it narrows are defined terms,
    /// so the `get-value` asks for them too.
    fn script_narrowed(&self, extra: &ExtraNarrowing) -> String {
        // `%laneid`/`%warpid` are tied to the thread id only when a formula uses them: the
        // linear id multiplies launch dimensions, which costs the solver when they are unknown.
        let mut asserts = self.asserts.clone();
        for t in 1..=2u8 {
            let lin = self.linear_tid(t);
            let lane = sym_name(Sym::Special(Special::LaneId), t);
            if self.enc.is_declared(&lane) {
                asserts.push(format!("(= {lane} (bvand {lin} {}))", bv(31, 32)));
            }
            let warp = sym_name(Sym::Special(Special::WarpId), t);
            if self.enc.is_declared(&warp) {
                asserts.push(format!("(= {warp} (bvlshr {lin} {}))", bv(5, 32)));
            }
        }
        let mut text = self.enc.script_narrowed(&asserts, extra);
        let mut reported = self.reported();
        if !extra.is_empty() {
            for n in self.enc.narrowed_with(extra) {
                if !reported.contains(&n) {
                    reported.push(n);
                }
            }
        }
        if !reported.is_empty() {
            text.push_str(&format!("(get-value ({}))\n", reported.join(" ")));
        }
        text
    }

    /// The names whose values a counterexample reads: the wanted ones, the constants declared
    /// narrow (defined terms, which a model reports only when asked; what the query fixes about
    /// them is worth showing), and the parameters the formulas mention (the replay passes them).
    pub fn reported(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.wanted.iter().map(String::as_str).collect();
        for n in self.enc.narrowed().into_iter().chain(self.enc.declared_params()) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        names
    }

    /// The query for the solver driver (see [`crate::smt::read_query`]).
    pub fn to_smt(&self) -> Result<::smt::Query, String> {
        crate::smt::read_query(&self.script())
    }

    /// The query with the constants of `extra` declared narrower, for a witness tier that
    /// asserts (at most) those ranges.
    pub fn to_smt_narrowed(&self, extra: &ExtraNarrowing) -> Result<::smt::Query, String> {
        crate::smt::read_query(&self.script_narrowed(extra))
    }
}

/// Whether `e` is a special register of dimension `d`.
fn special(x: &Exprs, e: ExprId, want: fn(u8) -> Special) -> Option<u8> {
    match x.node(e) {
        model::expr::Node::Var { sym: Sym::Special(s), bits: 32 } => (0..3u8).find(|d| *s == want(*d)),
        _ => None,
    }
}

/// The operands of a commutative binary node `op` of width `bits`.
fn operands(x: &Exprs, e: ExprId, op: model::ops::BinOp, bits: u32) -> Option<(ExprId, ExprId)> {
    match x.node(e) {
        model::expr::Node::Bin { op: o, a, b, bits: w } if *o == op && *w == bits => Some((*a, *b)),
        _ => None,
    }
}

/// `ctaid*ntid + tid` along dimension `d` (operands in any order).
fn global_index(x: &Exprs, e: ExprId) -> Option<u8> {
    use model::ops::BinOp::{Add, Mul};
    let (a, b) = operands(x, e, Add, 32)?;
    let (prod, tid) = if operands(x, a, Mul, 32).is_some() { (a, b) } else { (b, a) };
    let (m, n) = operands(x, prod, Mul, 32)?;
    let d = special(x, tid, Special::Tid)?;
    let ok = |c: ExprId, s: ExprId| special(x, c, Special::Ctaid) == Some(d) && special(x, s, Special::Ntid) == Some(d);
    (ok(m, n) || ok(n, m)).then_some(d)
}

/// `ntid*nctaid` along dimension `d`.
fn grid_size(x: &Exprs, e: ExprId, d: u8) -> bool {
    let Some((a, b)) = operands(x, e, model::ops::BinOp::Mul, 32) else { return false };
    let is = |n: ExprId, c: ExprId| special(x, n, Special::Ntid) == Some(d) && special(x, c, Special::Nctaid) == Some(d);
    is(a, b) || is(b, a)
}

/// `sext(G) + zext(k) * sext(S)` in 64 bits: `(G, k, d)`.
fn grid_stride(x: &Exprs, e: ExprId) -> Option<(ExprId, ExprId, u8)> {
    use model::expr::Node::Ext;
    use model::ops::BinOp::{Add, Mul};
    let (a, b) = operands(x, e, Add, 64)?;
    let ext = |v: ExprId, signed: bool| match x.node(v) {
        Ext { a, from: 32, to: 64, signed: s } if *s == signed => Some(*a),
        _ => None,
    };
    let try_order = |base: ExprId, step: ExprId| -> Option<(ExprId, ExprId, u8)> {
        let g = ext(base, true)?;
        let d = global_index(x, g)?;
        let (m, n) = operands(x, step, Mul, 64)?;
        let (k, s) = match (ext(m, false), ext(n, true)) {
            (Some(k), Some(s)) if grid_size(x, s, d) => (k, s),
            _ => (ext(n, false)?, ext(m, true)?),
        };
        grid_size(x, s, d).then_some((g, k, d))
    };
    try_order(a, b).or_else(|| try_order(b, a))
}

/// At most this many row-major splits per query (their lemmas are pairwise).
const MAX_ROW_MAJOR_SPLITS: usize = 8;
/// Rows of rows: `(blockIdx.x * warps + warp) * C + col` is two levels.
const ROW_MAJOR_DEPTH: u32 = 2;
/// A level stops stating row-major lemmas once this many (its own and its sub-levels') are
/// stated, which keeps a query under about three times as many: pairs of readings would
/// otherwise multiply (8 x 8 pairs, each with two sub-levels of 8 x 8).
const MAX_ROW_MAJOR_LEMMAS: usize = 32;

/// `ctaid_d * ntid_e + tid_e` with `d != e`: `(d, e)`.
fn mixed_global_index(x: &Exprs, e: ExprId) -> Option<(u8, u8)> {
    use model::ops::BinOp::{Add, Mul};
    let (a, b) = operands(x, e, Add, 32)?;
    let (prod, tid) = if operands(x, a, Mul, 32).is_some() { (a, b) } else { (b, a) };
    let (m, n) = operands(x, prod, Mul, 32)?;
    let te = special(x, tid, Special::Tid)?;
    let pick = |c: ExprId, s: ExprId| Some((special(x, c, Special::Ctaid)?, special(x, s, Special::Ntid).filter(|&d| d == te)?));
    let (d, _) = pick(m, n).or_else(|| pick(n, m))?;
    (d != te).then_some((d, te))
}

/// How many dimensions of a launch shape may be larger than 1: trailing ones of size exactly 1
/// do not count.
fn dims_used(shape: &[spec::DimRange; 3]) -> usize {
    if shape[2].value() != Some(1) {
        3
    } else if shape[1].value() != Some(1) {
        2
    } else {
        1
    }
}

/// Both threads in the same block.
pub fn same_block() -> String {
    format!("(and {})", DIMS.iter().map(|d| format!("(= ctaid_{d}_1 ctaid_{d}_2)")).collect::<Vec<_>>().join(" "))
}

/// The two thread ids differ.
pub fn distinct_tids() -> String {
    format!("(or {})", DIMS.iter().map(|d| format!("(distinct tid_{d}_1 tid_{d}_2)")).collect::<Vec<_>>().join(" "))
}
