//! The layout of a tactic proof, and the proof with its failing parts cut out.
//!
//! A `by` block is a sequence of tactic steps in one column; a step runs on over the lines
//! indented deeper. Some steps hold a block of their own: a focus `· tacs`, `case tag => tacs`
//! or `next => tacs`, and a sub-proof `… := by tacs` (a `have`, `show … from`, `suffices`). This
//! module reads that layout from the text alone (Lean's tactic blocks are whitespace-sensitive,
//! so the columns say it) and, given where Lean reported errors, builds a **skeleton**: the
//! proof with each failing part replaced by a hole, everything else kept as it was:
//!
//! * an error inside a step cuts that step and the rest of its block (the steps after it ran on
//!   goals the failing step was meant to produce);
//! * `unsolved goals` at a block's opener (the `by`, the `·`, the `case`) means every step ran
//!   and goals were left: a hole is added at the block's end, and nothing is cut.
//!
//! A hole is written as `done -- hole N`: `done` fails on the goals left at that point and Lean
//! prints them, which is how the goals of a hole are learned, without any `sorry` in the text.
//! [`splice`] puts proofs of those goals back where the holes were. Nothing here is trusted:
//! only a spliced proof that Lean accepts counts.

use std::collections::{BTreeMap, BTreeSet};

/// A position in the proof text: 0-based line and 0-based column in characters (Lean counts
/// columns in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

/// How a hole is written (a number follows).
pub const HOLE: &str = "done -- hole";

/// A tactic block: its opener (`by`, `·`, `case`) and its steps, all starting in column `col`.
#[derive(Debug)]
struct Block {
    opener: Pos,
    col: usize,
    steps: Vec<Step>,
    /// The block and step this block is part of; `None` for the proof's own `by`.
    parent: Option<(usize, usize)>,
}

#[derive(Debug)]
struct Step {
    start: Pos,
    /// Its last line that holds code.
    last_line: usize,
    nested: Option<usize>,
}

/// Where an error lies: at a block's opener (before its first step), or in one of its steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Opener(usize),
    Step(usize, usize),
}

/// The layout of a `by` proof: its blocks, the proof's own `by` first.
#[derive(Debug)]
pub struct Layout {
    lines: Vec<Vec<char>>,
    blocks: Vec<Block>,
}

/// A proof with holes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skeleton {
    pub text: String,
    pub holes: Vec<Hole>,
}

/// A hole: `done -- hole {number}` with `done` at `pos`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hole {
    pub number: usize,
    pub pos: Pos,
}

/// An error Lean reported in the proof: where, and whether it is `unsolved goals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorAt {
    pub pos: Pos,
    pub unsolved_goals: bool,
}

impl Layout {
    /// Reads the layout of a proof that is a `by` block; `None` for a term proof.
    pub fn parse(proof: &str) -> Option<Layout> {
        let lines: Vec<Vec<char>> = proof.split('\n').map(|l| l.chars().collect()).collect();
        let mut layout = Layout { lines, blocks: Vec::new() };
        let by = layout.first_code(Pos { line: 0, col: 0 }, layout.lines.len() - 1)?;
        if !layout.is_by(by) {
            return None;
        }
        let last = layout.lines.len() - 1;
        layout.block_after(by, Pos { line: by.line, col: by.col + 2 }, last, None)?;
        Some(layout)
    }

    fn text_from(&self, p: Pos) -> String {
        self.lines[p.line].iter().skip(p.col).collect()
    }

    /// A line without code (blank, or only a comment).
    fn blank(&self, line: usize) -> bool {
        let text: String = self.lines[line].iter().collect();
        let t = text.trim();
        t.is_empty() || t.starts_with("--")
    }

    fn indent(&self, line: usize) -> usize {
        self.lines[line].iter().take_while(|c| c.is_whitespace()).count()
    }

    /// The first code at or after `from`, up to line `max_line`.
    fn first_code(&self, from: Pos, max_line: usize) -> Option<Pos> {
        let line = &self.lines[from.line];
        if let Some(col) = (from.col..line.len()).find(|&c| !line[c].is_whitespace()) {
            let rest: String = line[col..].iter().collect();
            if !rest.starts_with("--") {
                return Some(Pos { line: from.line, col });
            }
        }
        (from.line + 1..=max_line).find(|&l| !self.blank(l)).map(|l| Pos { line: l, col: self.indent(l) })
    }

    /// A line in column `col` that continues the step above it: an alternative `| pat => …` of
    /// `induction … with`, `cases … with`, `match`, `first`.
    fn is_alternative(&self, line: usize, col: usize) -> bool {
        self.indent(line) == col && self.lines[line].get(col) == Some(&'|')
    }

    /// `by` as a token at `p`.
    fn is_by(&self, p: Pos) -> bool {
        let line = &self.lines[p.line];
        let before = p.col.checked_sub(1).map(|c| line[c]);
        line.get(p.col..p.col + 2) == Some(&['b', 'y'][..])
            && !before.is_some_and(lean::lexer::is_id_rest)
            && line.get(p.col + 2).is_none_or(|c| c.is_whitespace())
    }

    /// The block whose first step is the first code after `after`, up to line `max_line`.
    fn block_after(&mut self, opener: Pos, after: Pos, max_line: usize, parent: Option<(usize, usize)>) -> Option<usize> {
        let first = self.first_code(after, max_line)?;
        let col = first.col;
        let id = self.blocks.len();
        self.blocks.push(Block { opener, col, steps: Vec::new(), parent });
        let mut start = first;
        loop {
            let mut last = start.line;
            let mut next = start.line + 1;
            while next <= max_line && (self.blank(next) || self.indent(next) > col || self.is_alternative(next, col)) {
                if !self.blank(next) {
                    last = next;
                }
                next += 1;
            }
            let index = self.blocks[id].steps.len();
            self.blocks[id].steps.push(Step { start, last_line: last, nested: None });
            let nested = self.nested_block(start, last, (id, index));
            self.blocks[id].steps[index].nested = nested;
            if next <= max_line && self.indent(next) == col {
                start = Pos { line: next, col };
            } else {
                return Some(id);
            }
        }
    }

    /// The block a step holds, if any: `· tacs`, `case … => tacs`, `next => tacs`, `:= by tacs`.
    fn nested_block(&mut self, start: Pos, last: usize, parent: (usize, usize)) -> Option<usize> {
        let text = self.text_from(start);
        if text.starts_with('·') || text.starts_with(". ") || text == "." {
            return self.block_after(start, Pos { line: start.line, col: start.col + 1 }, last, Some(parent));
        }
        let word: String = text.chars().take_while(|c| lean::lexer::is_id_rest(*c)).collect();
        if ["case", "case'", "next"].contains(&word.as_str()) {
            let arrow = text.find("=>")?;
            let col = start.col + text[..arrow].chars().count() + 2;
            return self.block_after(start, Pos { line: start.line, col }, last, Some(parent));
        }
        for line in start.line..=last {
            let from = if line == start.line { start.col } else { 0 };
            for col in from..self.lines[line].len() {
                let p = Pos { line, col };
                let before: String = self.lines[line][from..col].iter().collect();
                if self.is_by(p) && before.trim_end().ends_with(":=") {
                    return self.block_after(p, Pos { line, col: col + 2 }, last, Some(parent));
                }
            }
        }
        None
    }

    fn last_line(&self, b: usize) -> usize {
        self.blocks[b].steps.last().map_or(self.blocks[b].opener.line, |s| s.last_line)
    }

    fn depth(&self, mut b: usize) -> usize {
        let mut d = 0;
        while let Some((p, _)) = self.blocks[b].parent {
            b = p;
            d += 1;
        }
        d
    }

    fn locate(&self, p: Pos) -> Option<Place> {
        self.locate_in(0, p)
    }

    fn locate_in(&self, b: usize, p: Pos) -> Option<Place> {
        let block = &self.blocks[b];
        if p < block.steps[0].start {
            return (p >= block.opener).then_some(Place::Opener(b));
        }
        let i = block.steps.iter().rposition(|s| s.start <= p)?;
        if let Some(n) = block.steps[i].nested {
            let nested = &self.blocks[n];
            if p >= nested.opener && p < nested.steps[0].start {
                return Some(Place::Opener(n));
            }
            if p >= nested.steps[0].start && p.line <= self.last_line(n) {
                return self.locate_in(n, p);
            }
        }
        Some(Place::Step(b, i))
    }

    fn ends_with_hole(&self, b: usize) -> bool {
        self.blocks[b].steps.last().is_some_and(|s| self.text_from(s.start).starts_with(HOLE))
    }

    /// Whether block `b` lies in a part that a cut of an enclosing block removes.
    fn removed(&self, mut b: usize, cuts: &BTreeMap<usize, usize>) -> bool {
        while let Some((parent, step)) = self.blocks[b].parent {
            if cuts.get(&parent).is_some_and(|&from| from <= step) {
                return true;
            }
            b = parent;
        }
        false
    }

    /// The skeleton for these errors. `Err` says why there is none: an error outside the proof,
    /// or a first step that already fails (nothing would be kept).
    pub fn isolate(&self, errors: &[ErrorAt]) -> Result<Skeleton, String> {
        let mut cuts: BTreeMap<usize, usize> = BTreeMap::new();
        let mut appends: BTreeSet<usize> = BTreeSet::new();
        for e in errors {
            let place = self.locate(e.pos).ok_or_else(|| format!("an error at line {}, column {} is outside the tactic proof", e.pos.line + 1, e.pos.col))?;
            let (block, from) = match place {
                Place::Opener(b) if e.unsolved_goals => {
                    appends.insert(b);
                    continue;
                }
                Place::Opener(b) => (b, 0),
                Place::Step(b, i) => (b, i),
            };
            let at = cuts.entry(block).or_insert(from);
            *at = (*at).min(from);
        }
        appends.retain(|b| !cuts.contains_key(b) && !self.ends_with_hole(*b) && !self.removed(*b, &cuts));
        let kept: BTreeMap<usize, usize> = cuts.iter().filter(|(b, _)| !self.removed(**b, &cuts)).map(|(b, s)| (*b, *s)).collect();
        if kept.get(&0) == Some(&0) {
            return Err("the proof's first step already fails, so nothing of it can be kept".into());
        }
        // Edits from the end of the text backwards, so that earlier positions stay valid; of two
        // holes added after the same line, the outer one is inserted first and ends up last.
        let mut edits: Vec<(Pos, usize, Edit)> = kept.iter().map(|(&b, &s)| (self.blocks[b].steps[s].start, self.depth(b), Edit::Cut(b, s))).collect();
        edits.extend(appends.iter().map(|&b| (Pos { line: self.last_line(b), col: usize::MAX }, self.depth(b), Edit::Append(b))));
        edits.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        let mut lines: Vec<String> = self.lines.iter().map(|l| l.iter().collect()).collect();
        for (_, _, edit) in edits {
            match edit {
                Edit::Cut(b, s) => {
                    let start = self.blocks[b].steps[s].start;
                    let head: String = self.lines[start.line].iter().take(start.col).collect();
                    lines.splice(start.line..=self.last_line(b), [format!("{head}{HOLE}")]);
                }
                Edit::Append(b) => lines.insert(self.last_line(b) + 1, format!("{}{HOLE}", " ".repeat(self.blocks[b].col))),
            }
        }
        Ok(number_holes(&lines.join("\n")))
    }
}

#[derive(Clone, Copy, Debug)]
enum Edit {
    /// Replace step `.1` of block `.0` and the rest of the block by a hole.
    Cut(usize, usize),
    /// Add a hole after the block's last step.
    Append(usize),
}

/// Numbers the holes of a text in order and finds them.
pub fn number_holes(text: &str) -> Skeleton {
    let mut holes = Vec::new();
    let mut out = Vec::new();
    for (line, l) in text.split('\n').enumerate() {
        let Some(at) = l.find(HOLE).filter(|&at| l[..at].trim().is_empty() || l[..at].trim_end().ends_with(['·', '>']) || l[..at].trim_end().ends_with("by"))
        else {
            out.push(l.to_string());
            continue;
        };
        let number = holes.len() + 1;
        holes.push(Hole { number, pos: Pos { line, col: l[..at].chars().count() } });
        out.push(format!("{}{HOLE} {number}", &l[..at]));
    }
    Skeleton { text: out.join("\n"), holes }
}

/// A proof of one goal of a hole: the names to give its inaccessible hypotheses, and a proof
/// of the goal restated (a term or a `by` block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoalProof {
    pub renamed: Vec<String>,
    pub proof: String,
}

/// The tactics that replace a hole in column `col`, for its goals in order: `skip` when it has
/// none, `exact <proof>` for one, a `·` per goal for several. The first line goes where the
/// hole's `done` was; the other lines carry their own indentation.
pub fn fill(col: usize, goals: &[GoalProof]) -> String {
    if goals.is_empty() {
        return "skip".into();
    }
    let single = goals.len() == 1;
    let mut lines: Vec<String> = Vec::new();
    for g in goals {
        let mut body: Vec<String> = Vec::new();
        if !g.renamed.is_empty() {
            body.push(format!("rename_i {}", g.renamed.join(" ")));
        }
        let mut proof = g.proof.trim().split('\n');
        body.push(format!("exact {}", proof.next().unwrap_or_default()));
        // The proof's own lines keep their indentation, deeper than the `exact`.
        body.extend(proof.map(|l| format!("  {l}")));
        let (bullet, inner) = if single { ("", col) } else { ("· ", col + 2) };
        for (i, b) in body.iter().enumerate() {
            let indent = if i == 0 { col } else { inner };
            lines.push(format!("{}{}{b}", " ".repeat(indent), if i == 0 { bullet } else { "" }));
        }
    }
    let text = lines.join("\n");
    text[col..].to_string()
}

/// The skeleton with `fills[i]` in place of hole `i` (see [`fill`]).
pub fn splice(skeleton: &Skeleton, fills: &[String]) -> String {
    let mut lines: Vec<String> = skeleton.text.split('\n').map(str::to_string).collect();
    for (hole, text) in skeleton.holes.iter().zip(fills).rev() {
        let head: String = lines[hole.pos.line].chars().take(hole.pos.col).collect();
        let mut parts = text.split('\n');
        let first = format!("{head}{}", parts.next().unwrap_or_default());
        let rest: Vec<String> = parts.map(str::to_string).collect();
        lines.splice(hole.pos.line..=hole.pos.line, std::iter::once(first).chain(rest));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn at(line: usize, col: usize, unsolved_goals: bool) -> ErrorAt {
        ErrorAt { pos: Pos { line, col }, unsolved_goals }
    }

    /// The proof the tests cut (its line numbers are what the errors below point at).
    const PROOF: &str = "by
  intro n m h
  have h1 : n + 0 = n := by
    simp
  have h2 : n ≤ m := by
    induction n with
    | zero => omega
    | succ k ih => omega
  constructor
  · exact h1
  · exact h2
    rfl";

    #[test]
    fn a_failing_have_sub_proof_becomes_a_hole_and_the_rest_is_kept() {
        // RECORDED FORMAT: `omega` failing in the `succ` case, at the `omega` (line 7, col 18).
        let sk = Layout::parse(PROOF).unwrap().isolate(&[at(7, 18, false)]).unwrap();
        expect![[r#"
            by
              intro n m h
              have h1 : n + 0 = n := by
                simp
              have h2 : n ≤ m := by
                done -- hole 1
              constructor
              · exact h1
              · exact h2
                rfl"#]]
        .assert_eq(&sk.text);
        assert_eq!(sk.holes, vec![Hole { number: 1, pos: Pos { line: 5, col: 4 } }]);
    }

    #[test]
    fn a_failing_step_in_a_focus_block_cuts_the_rest_of_that_block_only() {
        // RECORDED FORMAT: `type mismatch` at `exact h2` (line 10, col 4); and the `have`'s
        // `unsolved goals` reported at its `by` (line 2, col 25): a hole after `simp`.
        let sk = Layout::parse(PROOF).unwrap().isolate(&[at(10, 4, false), at(2, 25, true)]).unwrap();
        expect![[r#"
            by
              intro n m h
              have h1 : n + 0 = n := by
                simp
                done -- hole 1
              have h2 : n ≤ m := by
                induction n with
                | zero => omega
                | succ k ih => omega
              constructor
              · exact h1
              · done -- hole 2"#]]
        .assert_eq(&sk.text);
        assert_eq!(sk.holes[1].pos, Pos { line: 11, col: 4 });
    }

    #[test]
    fn unsolved_goals_at_the_proof_s_by_add_a_hole_at_its_end_once() {
        let proof = "by\n  intro x\n  simp only [Nat.add_zero]";
        let layout = Layout::parse(proof).unwrap();
        let sk = layout.isolate(&[at(0, 0, true)]).unwrap();
        assert_eq!(sk.text, "by\n  intro x\n  simp only [Nat.add_zero]\n  done -- hole 1");
        // Isolating the skeleton again for the same error changes nothing.
        let again = Layout::parse(&sk.text).unwrap().isolate(&[at(0, 0, true)]).unwrap();
        assert_eq!(again.text, sk.text);
    }

    #[test]
    fn nested_holes_after_the_same_line_are_inner_first() {
        let proof = "by\n  constructor\n  · simp";
        let sk = Layout::parse(proof).unwrap().isolate(&[at(0, 0, true), at(2, 2, true)]).unwrap();
        assert_eq!(sk.text, "by\n  constructor\n  · simp\n    done -- hole 1\n  done -- hole 2");
    }

    #[test]
    fn what_cannot_be_repaired_says_why() {
        assert!(Layout::parse("fun n => rfl").is_none(), "a term proof has no steps");
        let layout = Layout::parse("by\n  omega\n  rfl").unwrap();
        assert!(layout.isolate(&[at(1, 2, false)]).unwrap_err().contains("first step already fails"));
        // A cut inside a part a cut further out removes is void.
        let sk = Layout::parse(PROOF).unwrap().isolate(&[at(3, 4, false), at(1, 2, false)]);
        assert!(sk.unwrap_err().contains("first step"));
    }

    #[test]
    fn proofs_of_the_goals_are_spliced_where_the_holes_were() {
        let sk = Layout::parse(PROOF).unwrap().isolate(&[at(7, 18, false), at(11, 4, false)]).unwrap();
        let one = fill(4, &[GoalProof { renamed: vec![], proof: "by\n  induction n with\n  | zero => simp\n  | succ k ih => omega".into() }]);
        let two =
            fill(4, &[GoalProof { renamed: vec!["h_1".into()], proof: "Nat.le_refl _".into() }, GoalProof { renamed: vec![], proof: "by\n  trivial".into() }]);
        expect![[r#"
            by
              intro n m h
              have h1 : n + 0 = n := by
                simp
              have h2 : n ≤ m := by
                exact by
                    induction n with
                    | zero => simp
                    | succ k ih => omega
              constructor
              · exact h1
              · exact h2
                · rename_i h_1
                  exact Nat.le_refl _
                · exact by
                      trivial"#]]
        .assert_eq(&splice(&sk, &[one, two]));
        assert_eq!(fill(6, &[]), "skip");
    }
}
