#!/bin/sh
# TEST DOUBLE (see README.md): learns from the errors fed back.
input=$(cat)
case "$input" in
  *'"attempts":[]'*) printf '{"proof": "by\\n  sorry"}\n' ;;
  *'the audit rejected the proof'*) printf '{"proof": "trivial"}\n' ;;
  *) printf '{"proof": "by\\n  sorry"}\n' ;;
esac
