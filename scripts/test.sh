#!/usr/bin/env bash
# Runs the whole test suite over every package, with the services the tests
# need (PostgreSQL with pgvector built into it, Redis) started on loopback for the run and stopped
# after it, the pinned openai-node SDKs installed (scripts/services/node-sdk.sh), Debian's chromium for the
# tests that drive a browser (scripts/services/chromium.sh) and Debian's wrk for the load harness's test
# (scripts/services/wrk.sh). Extra arguments go
# to go test, e.g. `bash scripts/test.sh -race`; packages named among them
# (`./module/...`) are tested instead of all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
trap 'bash scripts/services/redis.sh stop; bash scripts/services/postgres.sh stop' EXIT
# Before any server starts: the packages pgvector's build needs may upgrade the server's.
bash scripts/services/pgvector.sh install
eval "$(bash scripts/services/postgres.sh)"
eval "$(bash scripts/services/pgvector.sh)"
eval "$(bash scripts/services/redis.sh)"
eval "$(bash scripts/services/node-sdk.sh)"
eval "$(bash scripts/services/chromium.sh)"
eval "$(bash scripts/services/wrk.sh)"
# A test that needs a service and finds none fails instead of skipping.
export MODELGATE_REQUIRE_SERVICES=1
packages=(./...)
for arg in "$@"; do
	case $arg in ./*) packages=() ;; esac
done
go test "$@" "${packages[@]}"
