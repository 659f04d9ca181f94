#!/bin/sh
# TEST DOUBLE (see README.md): answers a segment request with the proposal in file $1 while no
# attempt was refused, then with the proposal in file $2 (or $1 again). The last request is
# written to $LARK_TEST_REQUEST_OUT when it is set.
input=$(cat)
if [ -n "$LARK_TEST_REQUEST_OUT" ]; then
  printf '%s\n' "$input" > "$LARK_TEST_REQUEST_OUT"
fi
case "$input" in
  *'"attempts":[]'*) cat "$1" ;;
  *) cat "${2:-$1}" ;;
esac
