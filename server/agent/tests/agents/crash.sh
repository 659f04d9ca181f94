#!/bin/sh
# TEST DOUBLE (see README.md): crashes.
cat > /dev/null
echo "segmentation fault (pretend)" >&2
exit 3
