#!/bin/sh
# TEST DOUBLE (see README.md): a proof with one failing `have`, then sub-goal proofs.
# Every request is appended, one JSON object a line, to $LARK_TEST_REQUEST_LOG when it is set.
input=$(cat)
if [ -n "$LARK_TEST_REQUEST_LOG" ]; then
  printf '%s\n' "$input" >> "$LARK_TEST_REQUEST_LOG"
fi
case "$input" in
  *'"subgoal_of"'*)
    # A sub-goal: `sorry` first; once the audit's refusal is fed back, a real proof — unless
    # LARK_TEST_STUBBORN is set, then always `sorry`.
    case "$input" in
      *'the audit rejected the proof'*)
        if [ -z "$LARK_TEST_STUBBORN" ]; then printf '{"proof": "Nat.zero_add n"}\n'; exit 0; fi ;;
    esac
    printf '{"proof": "by\\n  sorry"}\n' ;;
  *)
    printf '{"proof": "by\\n  intro n\\n  have h1 : n + 0 = n := by\\n    rfl\\n  have h2 : 0 + n = n := by\\n    rfl\\n  exact And.intro h1 h2"}\n' ;;
esac
