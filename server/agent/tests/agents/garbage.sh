#!/bin/sh
# TEST DOUBLE (see README.md): answers outside the protocol.
cat > /dev/null
echo "Sure! Here is a proof of your theorem: it is obvious."
