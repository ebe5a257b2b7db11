#!/usr/bin/env bash
# Runs the whole test suite over every package. Extra arguments go to
# go test, e.g. `bash scripts/test.sh -race`.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test "$@" ./...
