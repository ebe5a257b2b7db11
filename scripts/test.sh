#!/usr/bin/env bash
# Runs the whole test suite. It starts what the tests need on loopback
# (PostgreSQL, from Debian's packages when missing), exports where to find
# it, and runs `go test` over every package. Extra arguments go to go test,
# e.g. `bash scripts/test.sh -race`.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash .ci/postgres.sh)"
exec go test "$@" ./...
