//! Lean 4's goal display read back, and a goal stated again as a theorem of its own.
//!
//! Lean prints open goals (in `unsolved goals`, and after the first line of messages such as
//! `linarith failed`) as
//!
//! ```text
//! case h.left
//! x y : Nat
//! h :
//!   ∀ (i : Nat),
//!     i < x → i < y
//! ⊢ x + 0 ≤ y
//!
//! case h.right
//! ⊢ True
//! ```
//!
//! one item per line that starts in column 0 — an optional `case` tag, hypotheses `names : type`
//! (or `name : type := value` for a local definition), the target after `⊢` — with longer types
//! continued on indented lines, and a blank line between goals. A goal re-stated with its
//! hypotheses as binders (`theorem t (x y : Nat) (h : …) : x + 0 ≤ y :=`) can be proved on its
//! own; a proof of it also works where the goal came from, since the same names are in scope.
//! Nothing here is trusted: a statement read back wrongly only makes a proof fail in Lean.

use lean::lexer::{is_id_first, is_id_rest};

/// One open goal as Lean printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Goal {
    pub case: Option<String>,
    pub hyps: Vec<Hyp>,
    /// The target (what follows `⊢`), continuation lines included.
    pub target: String,
}

/// One line of a goal's context: `x y : Nat`, or `n : Nat := 4` for a local definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hyp {
    pub names: Vec<String>,
    pub ty: String,
    pub value: Option<String>,
}

/// The goals of an `unsolved goals` message; `None` for any other message.
pub fn unsolved_goals(message: &str) -> Option<Vec<Goal>> {
    let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
    (first.trim() == "unsolved goals").then(|| parse_goal_list(rest))
}

/// Reads a goal display (the lines after a message's first line).
pub fn parse_goal_list(text: &str) -> Vec<Goal> {
    let mut goals = Vec::new();
    let mut current = Partial::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            current.finish_into(&mut goals);
        } else if line.starts_with(char::is_whitespace) {
            // A longer type or target continues on indented lines.
            current.continue_with(line);
        } else if let Some(tag) = line.strip_prefix("case ") {
            current.finish_into(&mut goals);
            current.case = Some(tag.trim().to_string());
        } else if let Some(target) = line.strip_prefix('⊢') {
            current.target = Some(target.trim_start().to_string());
        } else if let Some(hyp) = parse_hyp(line) {
            if current.target.is_some() {
                current.finish_into(&mut goals);
            }
            current.hyps.push(hyp);
        }
        // Anything else (a trailing note Lean appends) belongs to no goal.
    }
    current.finish_into(&mut goals);
    goals
}

/// A goal being read: complete once it has a target.
#[derive(Default)]
struct Partial {
    case: Option<String>,
    hyps: Vec<Hyp>,
    target: Option<String>,
}

impl Partial {
    fn continue_with(&mut self, line: &str) {
        let text = if let Some(t) = self.target.as_mut() {
            t
        } else if let Some(h) = self.hyps.last_mut() {
            h.value.as_mut().unwrap_or(&mut h.ty)
        } else {
            return;
        };
        if text.is_empty() {
            // `h :` with its type on the lines below.
            text.push_str(line.trim_start());
        } else {
            text.push('\n');
            text.push_str(line);
        }
    }

    fn finish_into(&mut self, goals: &mut Vec<Goal>) {
        let done = std::mem::take(self);
        if let Some(target) = done.target {
            goals.push(Goal { case: done.case, hyps: done.hyps, target });
        }
    }
}

/// `x y : T`, `h :` (type on the next lines), `n : T := v`.
fn parse_hyp(line: &str) -> Option<Hyp> {
    let (names, rest) = line.split_once(" :").filter(|(_, rest)| rest.is_empty() || rest.starts_with(' '))?;
    let names: Vec<String> = names.split_whitespace().map(str::to_string).collect();
    let plain = |n: &String| n.chars().next().is_some_and(|c| is_id_first(c) || c == '«') && !n.contains(['(', ')', ':']);
    if names.is_empty() || !names.iter().all(plain) {
        return None;
    }
    let rest = rest.trim_start();
    let (ty, value) = match split_top_level(rest, " := ") {
        Some((ty, value)) => (ty.to_string(), Some(value.to_string())),
        None => (rest.to_string(), None),
    };
    Some(Hyp { names, ty, value })
}

/// Splits at the first `sep` outside brackets.
fn split_top_level<'t>(text: &'t str, sep: &str) -> Option<(&'t str, &'t str)> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' | '{' | '⟨' => depth += 1,
            ')' | ']' | '}' | '⟩' => depth -= 1,
            _ if depth == 0 && text[i..].starts_with(sep) => return Some((&text[..i], &text[i + sep.len()..])),
            _ => {}
        }
    }
    None
}

/// A goal ready to be stated as a theorem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restated {
    /// `(x y : Nat)`, one per hypothesis line, continuation lines kept.
    pub binders: Vec<String>,
    pub target: String,
    /// The names given to the goal's inaccessible hypotheses (`x✝`, `inst✝¹`), in context
    /// order: where the goal came from, `rename_i` with these names makes a proof of the
    /// restated goal read the same.
    pub renamed: Vec<String>,
}

/// States a goal with its hypotheses as binders. `Err` says why it cannot be: Lean printed
/// something that is not Lean source (an elided proof `⋯`, a metavariable `?m.5`).
pub fn restate(goal: &Goal) -> Result<Restated, String> {
    let taken: Vec<&str> = goal.hyps.iter().flat_map(|h| h.names.iter().map(String::as_str)).collect();
    let mut renames: Vec<(String, String)> = Vec::new();
    for name in &taken {
        if let Some(at) = name.find('✝') {
            let base = &name[..at];
            let fresh = (1..).map(|n| format!("{base}_{n}")).find(|f| !taken.contains(&f.as_str()) && !renames.iter().any(|(_, r)| r == f)).unwrap_or_default();
            renames.push((name.to_string(), fresh));
        }
    }
    // Longest first, so that `a✝¹` is not read as `a✝` followed by `¹`.
    let mut order = renames.clone();
    order.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let rename = |text: &str| order.iter().fold(text.to_string(), |t, (from, to)| replace_name(&t, from, to));
    let mut binders = Vec::new();
    for h in &goal.hyps {
        let names: Vec<String> = h.names.iter().map(|n| rename(n)).collect();
        // A local definition's value is left out: the restated goal holds for every value, a
        // stronger statement, which Lean still decides.
        binders.push(format!("({} : {})", names.join(" "), rename(&h.ty)));
    }
    let target = rename(&goal.target);
    for text in binders.iter().chain([&target]) {
        not_source(text)?;
    }
    Ok(Restated { binders, target, renamed: renames.into_iter().map(|(_, to)| to).collect() })
}

/// Why a printed term cannot be read back as Lean source, if it cannot.
fn not_source(text: &str) -> Result<(), String> {
    if text.contains('⋯') {
        return Err("the goal shows an elided proof (`⋯`), which cannot be stated again".into());
    }
    if text.contains('✝') {
        return Err("the goal mentions an inaccessible name that is not one of its hypotheses".into());
    }
    let chars: Vec<char> = text.chars().collect();
    let metavariable = chars.windows(2).enumerate().any(|(i, w)| {
        let after_name = i > 0 && is_id_rest(chars[i - 1]);
        w[0] == '?' && !after_name && (is_id_first(w[1]) || w[1] == '_')
    });
    if metavariable {
        return Err("the goal mentions a metavariable (`?m`), which cannot be stated again".into());
    }
    if text.contains("sorry") {
        return Err("the goal mentions `sorry`".into());
    }
    Ok(())
}

/// Replaces the name `from` where it stands as a whole name.
fn replace_name(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back().or_else(|| out.chars().next_back());
        let after = rest[at + from.len()..].chars().next();
        let whole = !before.is_some_and(|c| is_id_rest(c) || c == '.') && !after.is_some_and(|c| is_id_rest(c) || c == '✝' || is_superscript_digit(c));
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

fn is_superscript_digit(c: char) -> bool {
    matches!(c, '⁰' | '¹' | '²' | '³' | '⁴' | '⁵' | '⁶' | '⁷' | '⁸' | '⁹')
}

/// `theorem name\n    (x : Nat) … :\n    target :=\n`: the header a proof of the goal follows.
pub fn theorem_header(name: &str, r: &Restated) -> String {
    let indent = |text: &str| text.lines().collect::<Vec<_>>().join("\n    ");
    let mut out = format!("theorem {name}");
    for b in &r.binders {
        out.push_str("\n    ");
        out.push_str(&indent(b));
    }
    out.push_str(" :\n    ");
    out.push_str(&indent(&r.target));
    out.push_str(" :=\n");
    out
}

/// The goal as Lean would print it, for requests and messages.
pub fn display(goal: &Goal) -> String {
    let mut out = String::new();
    if let Some(c) = &goal.case {
        out.push_str(&format!("case {c}\n"));
    }
    for h in &goal.hyps {
        out.push_str(&format!("{} : {}", h.names.join(" "), h.ty));
        if let Some(v) = &h.value {
            out.push_str(&format!(" := {v}"));
        }
        out.push('\n');
    }
    out.push_str(&format!("⊢ {}", goal.target));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    /// RECORDED FORMAT (written from Lean 4's goal display, `Lean.Meta.ppGoal`): two goals
    /// with case tags, grouped names, a multi-line hypothesis and a multi-line target.
    const TWO_GOALS: &str = "unsolved goals
case left
n m : Nat
h :
  ∀ (i : Nat),
    i < n → i < m
⊢ n + 0 ≤ m

case right
n m : Nat
h : ∀ (i : Nat), i < n → i < m
⊢ 0 + n =
    n";

    #[test]
    fn an_unsolved_goals_message_reads_back_as_goals() {
        let goals = unsolved_goals(TWO_GOALS).unwrap();
        expect![[r#"
            [
                Goal {
                    case: Some(
                        "left",
                    ),
                    hyps: [
                        Hyp {
                            names: [
                                "n",
                                "m",
                            ],
                            ty: "Nat",
                            value: None,
                        },
                        Hyp {
                            names: [
                                "h",
                            ],
                            ty: "∀ (i : Nat),\n    i < n → i < m",
                            value: None,
                        },
                    ],
                    target: "n + 0 ≤ m",
                },
                Goal {
                    case: Some(
                        "right",
                    ),
                    hyps: [
                        Hyp {
                            names: [
                                "n",
                                "m",
                            ],
                            ty: "Nat",
                            value: None,
                        },
                        Hyp {
                            names: [
                                "h",
                            ],
                            ty: "∀ (i : Nat), i < n → i < m",
                            value: None,
                        },
                    ],
                    target: "0 + n =\n    n",
                },
            ]
        "#]]
        .assert_debug_eq(&goals);
        assert_eq!(unsolved_goals("type mismatch\n  h\nhas type\n  True : Prop"), None);
    }

    #[test]
    fn a_goal_is_restated_as_a_theorem() {
        let goals = unsolved_goals(TWO_GOALS).unwrap();
        let r = restate(&goals[0]).unwrap();
        expect![[r#"
            theorem T.cert_sub1
                (n m : Nat)
                (h : ∀ (i : Nat),
                    i < n → i < m) :
                n + 0 ≤ m :=
        "#]]
        .assert_eq(&theorem_header("T.cert_sub1", &r));
        assert!(r.renamed.is_empty());
    }

    /// RECORDED FORMAT: after `intro`s without names and an instance argument, Lean shows
    /// inaccessible names with `✝` (and a superscript when several share a base name), and a
    /// `have`'s local definition with its value.
    #[test]
    fn inaccessible_names_are_renamed_and_local_definitions_keep_their_type() {
        let msg = "unsolved goals\nα : Type\ninst✝ : DecidableEq α\na✝¹ a✝ : α\nk : Nat := 4\nh : a✝¹ = a✝\n⊢ a✝ = a✝¹ ∧ k = 4";
        let goals = unsolved_goals(msg).unwrap();
        assert_eq!(goals[0].hyps[3].value.as_deref(), Some("4"));
        let r = restate(&goals[0]).unwrap();
        expect![[r#"
            theorem s
                (α : Type)
                (inst_1 : DecidableEq α)
                (a_1 a_2 : α)
                (k : Nat)
                (h : a_1 = a_2) :
                a_2 = a_1 ∧ k = 4 :=
        "#]]
        .assert_eq(&theorem_header("s", &r));
        assert_eq!(r.renamed, ["inst_1", "a_1", "a_2"]);
    }

    #[test]
    fn goals_that_are_not_source_are_refused_with_the_reason() {
        let elided = unsolved_goals("unsolved goals\ni : Fin 4\n⊢ (⟨i.val, ⋯⟩ : Fin 4) = i").unwrap();
        assert!(restate(&elided[0]).unwrap_err().contains("elided proof"));
        let meta = unsolved_goals("unsolved goals\nx : Nat\n⊢ x = ?m.12").unwrap();
        assert!(restate(&meta[0]).unwrap_err().contains("metavariable"));
        // `get?` is a name, not a metavariable.
        let name = unsolved_goals("unsolved goals\nl : List Nat\n⊢ l.get? 0 = l.head?").unwrap();
        assert!(restate(&name[0]).is_ok());
    }

    #[test]
    fn a_goal_without_hypotheses_and_a_trailing_note_are_read() {
        let goals = parse_goal_list("⊢ True\n\nSome note Lean appended.");
        assert_eq!(goals, vec![Goal { case: None, hyps: vec![], target: "True".into() }]);
        assert_eq!(display(&goals[0]), "⊢ True");
    }
}
