#!/usr/bin/env bash
# A throwaway PostgreSQL with pgvector for the tests: PGlite (PostgreSQL
# compiled to WebAssembly, run by Node) served over the wire protocol on a
# free loopback port, with the vector extension loaded. Debian's PostgreSQL
# has no pgvector package, so the vector store tests on PostgreSQL run here.
#
#   eval "$(bash scripts/services/pglite.sh)"        # start; exports the DSN
#   bash scripts/services/pglite.sh stop              # stop it, remove its files
#
# Starting installs the pinned npm packages into .cache/pglite (ignored by
# git) when they are missing, and prints on stdout:
#   export MODELGATE_TEST_PGVECTOR_DSN=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable&pool_max_conns=2&default_query_exec_mode=simple_protocol
#   export MODELGATE_TEST_PGVECTOR_DIR=/tmp/modelgate-pglite.XXXXXX
# Everything else goes to stderr. PGlite is one backend serving a few
# connections (-m) one transaction at a time: pools on it stay small
# (pool_max_conns), and since the connections share the backend's named
# prepared statements, pgx must not name its own (default_query_exec_mode).
set -euo pipefail

log() { echo "pglite.sh: $*" >&2; }

root=$(cd "$(dirname "$0")/../.." && pwd)
cache="$root/.cache/pglite"
# maxconns is how many connections the server accepts at once: two stores
# of a test with pools of 2, plus the test helper's own connection.
maxconns=8

install() {
	if [ -f "$cache/node_modules/@electric-sql/pglite-socket/dist/scripts/server.js" ] &&
		[ -d "$cache/node_modules/@electric-sql/pglite-pgvector" ]; then
		return
	fi
	if ! command -v npm >/dev/null; then
		log "npm is missing: install Node.js (apt-get install nodejs npm)"
		exit 1
	fi
	log "installing PGlite and pgvector into $cache"
	mkdir -p "$cache"
	[ -f "$cache/package.json" ] || echo '{"private": true}' >"$cache/package.json"
	(cd "$cache" && npm install --no-audit --no-fund --legacy-peer-deps \
		@electric-sql/pglite@0.5.16 @electric-sql/pglite-socket@0.2.17 @electric-sql/pglite-pgvector@0.0.15 >&2)
}

start() {
	install
	local dir port attempt pid
	dir=$(mktemp -d /tmp/modelgate-pglite.XXXXXX)
	for attempt in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			continue # taken
		fi
		(cd "$cache" && exec node node_modules/@electric-sql/pglite-socket/dist/scripts/server.js \
			-h 127.0.0.1 -p "$port" -m "$maxconns" -e @electric-sql/pglite-pgvector:vector) >"$dir/server.log" 2>&1 &
		pid=$!
		echo "$pid" >"$dir/pid"
		local i
		for i in $(seq 1 120); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				log "PGlite with pgvector on 127.0.0.1:$port (pid $pid), files in $dir"
				echo "export MODELGATE_TEST_PGVECTOR_DSN='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable&pool_max_conns=2&default_query_exec_mode=simple_protocol'"
				echo "export MODELGATE_TEST_PGVECTOR_DIR='$dir'"
				return
			fi
			sleep 0.5
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	cat "$dir/server.log" >&2
	rm -rf "$dir"
	log "the server did not start"
	exit 1
}

stop() {
	local dir=${MODELGATE_TEST_PGVECTOR_DIR:-}
	if [ -z "$dir" ] || [ ! -f "$dir/pid" ]; then
		log "nothing to stop: MODELGATE_TEST_PGVECTOR_DIR names no server"
		return 0
	fi
	kill "$(cat "$dir/pid")" 2>/dev/null || true
	rm -rf "$dir"
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
*)
	log "usage: pglite.sh [start|stop]"
	exit 2
	;;
esac
