#!/usr/bin/env bash
# Installs the official openai-node SDKs and the Vercel AI SDK, at the exact
# versions pinned in internal/nodesdk/package.json and package-lock.json
# (openai-node's current major as `openai`, the previous one as
# `openai-v6`; the AI SDK's current major as `ai` with `@ai-sdk/openai`, the
# previous one as `ai-v6` with `@ai-sdk/openai-v3`, and `zod`; on linux-x64
# a Node 22 for the current majors, which need it), for the end-to-end
# tests that drive modelgate with each (module/e2e/sdks/node_sdk_e2e_test.go,
# module/e2e/sdks/ai_sdk_e2e_test.go), and the OpenAI Agents SDK pinned in
# internal/nodesdk/agents into the folder's agents/
# (module/e2e/sdks/agents_sdk_e2e_test.go).
#
#   eval "$(bash scripts/services/node-sdk.sh)"     # install; exports the dir
#   bash scripts/services/node-sdk.sh stop          # nothing runs: a no-op
#
# The packages go into .cache/node-sdk (ignored by git) with `npm ci` from
# the committed locks, again whenever a lock changes. Prints on stdout only
#   export MODELGATE_TEST_NODE_SDK=/path/to/.cache/node-sdk
# (a folder whose node_modules holds the SDKs); everything else goes to stderr.
set -euo pipefail

log() { echo "node-sdk.sh: $*" >&2; }

root=$(cd "$(dirname "$0")/../.." && pwd)
pinned="$root/internal/nodesdk"
cache="$root/.cache/node-sdk"

# install_pinned FROM TO PACKAGE: npm ci of the package.json and lock in
# FROM into TO, unless TO holds them and PACKAGE already.
install_pinned() {
	local from=$1 to=$2 package=$3
	if [ -f "$to/node_modules/$package/package.json" ] &&
		cmp -s "$from/package-lock.json" "$to/package-lock.json" &&
		cmp -s "$from/package.json" "$to/package.json"; then
		return
	fi
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		log "node or npm is missing: install Node.js (apt-get install nodejs npm)"
		exit 1
	fi
	log "installing the pinned $package into $to"
	rm -rf "$to"
	mkdir -p "$to"
	cp "$from/package.json" "$from/package-lock.json" "$to/"
	(cd "$to" && npm ci --no-audit --no-fund --ignore-scripts >&2)
}

install() {
	install_pinned "$pinned" "$cache" openai
	install_pinned "$pinned/agents" "$cache/agents" @openai/agents
}

case "${1:-start}" in
start)
	install
	log "openai-node $(cd "$cache" && node -p '["openai", "openai-v6"].map(p => require("./node_modules/" + p + "/package.json").version).join(" and ")') in $cache"
	log "ai $(cd "$cache" && node -p '["ai", "ai-v6"].map(p => require("./node_modules/" + p + "/package.json").version).join(" and ")') in $cache"
	log "OpenAI Agents SDK $(cd "$cache/agents" && node -p 'require("./node_modules/@openai/agents/package.json").version') in $cache/agents"
	echo "export MODELGATE_TEST_NODE_SDK='$cache'"
	;;
stop) ;;
*)
	log "usage: node-sdk.sh [start|stop]"
	exit 2
	;;
esac
