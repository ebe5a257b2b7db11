#!/usr/bin/env bash
# Makes Debian's wrk (the independent load generator the harness drives
# the max-rate phase with, bench/wrk.go) available for its test
# (bench/wrk_test.go). Usage:
#   eval "$(bash scripts/services/wrk.sh)"
#   bash scripts/services/wrk.sh stop          # nothing to stop; kept for symmetry
# Installs Debian's wrk package when missing (as root, after apt-get
# update) and prints only the export line on stdout (logs go to stderr):
# MODELGATE_TEST_WRK, wrk's path.
set -euo pipefail

log() { echo "wrk.sh: $*" >&2; }

if [ "${1:-}" = stop ]; then
	exit 0
fi

if ! bin=$(command -v wrk); then
	if [ "$(id -u)" != 0 ]; then
		log "wrk is missing and installing it needs root: apt-get install wrk"
		exit 1
	fi
	log "installing wrk from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y --no-install-recommends wrk >&2
	bin=$(command -v wrk)
fi
log "$(dpkg-query -W -f='wrk ${Version}' wrk 2>/dev/null || echo "$bin")"
echo "export MODELGATE_TEST_WRK='$bin'"
