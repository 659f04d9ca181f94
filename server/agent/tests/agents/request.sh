#!/bin/sh
# TEST DOUBLE (see README.md): records the request.
cat > "$LARK_TEST_REQUEST_OUT"
printf '{"proof": "trivial"}\n'
