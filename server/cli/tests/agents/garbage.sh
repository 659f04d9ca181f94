#!/bin/sh
# TEST DOUBLE, not an agent: stands in for an external segmentation agent in `../lean_emit.rs`
# that never answers with the protocol's JSON.
cat > /dev/null
echo "Sure! Here are the segments: first the loads, then the loop."
