#!/bin/sh
# TEST DOUBLE (see README.md): never answers; its background child must be killed too.
sleep 1000 &
sleep 1000
