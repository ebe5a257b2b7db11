#!/usr/bin/env bash
# Runs the whole test suite over every package, with the services the tests
# need started for the run and stopped after it. Extra arguments go to
# go test, e.g. `bash scripts/test.sh -race`.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/services/redis.sh)"
trap 'bash scripts/services/redis.sh stop' EXIT
export MODELGATE_REQUIRE_SERVICES=1
go test "$@" ./...
