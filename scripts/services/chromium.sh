#!/usr/bin/env bash
# Makes a headless-capable Chromium available for the tests that drive a
# real browser (the dashboard, the conformance HTML report). Usage:
#   eval "$(bash scripts/services/chromium.sh)"
#   bash scripts/services/chromium.sh stop          # nothing to stop; kept for symmetry
# Installs Debian's chromium package when missing (as root, after apt-get
# update) and prints only the export line on stdout (logs go to stderr), so
# its output can be eval'd: MODELGATE_TEST_CHROMIUM, the browser's path.
# Each test starts its own browser with a fresh profile (internal/testbrowser).
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

if [ "${1:-}" = stop ]; then
	exit 0
fi

find_chromium() {
	local c
	for c in chromium chromium-browser; do
		if command -v "$c" >/dev/null; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

if ! bin=$(find_chromium); then
	if [ "$(id -u)" != 0 ]; then
		log "chromium is missing and installing it needs root: apt-get install chromium"
		exit 1
	fi
	log "installing chromium from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y --no-install-recommends chromium fonts-dejavu-core >&2
	bin=$(find_chromium)
fi
log "$("$bin" --version 2>/dev/null || echo "$bin")"
echo "export MODELGATE_TEST_CHROMIUM=$bin"
