#!/bin/sh
# TEST DOUBLE (see README.md): never answers; its background child must be killed too. The
# optional argument is how long to sleep, so that a test can find exactly its own processes.
sleep "${1:-1000}" &
sleep "${1:-1000}"
