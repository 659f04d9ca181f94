#!/bin/sh
# TEST DOUBLE, not an agent: stands in for an external segmentation agent in
# `../lean_emit.rs`. Answers a segment request with garbage while no attempt was refused, with
# the proposal in file $1 after one refused attempt, and with the proposal in file $2 after two.
refused=$(grep -o '"error":' | wc -l | tr -d ' ')
case "$refused" in
  0) echo "I think the kernel has three parts." ;;
  1) cat "$1" ;;
  *) cat "$2" ;;
esac
