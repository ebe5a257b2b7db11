#!/usr/bin/env bash
# Starts a throwaway redis-server on loopback for the tests that need real
# Redis (the rate_limit_store redis tests). Usage:
#   eval "$(bash scripts/services/redis.sh)"        # start it
#   bash scripts/services/redis.sh stop             # stop what that started
# Installs Debian's redis-server when missing, picks a free port, keeps no
# data on disk, and prints only export lines on stdout (logs go to stderr)
# so its output can be eval'd: MODELGATE_TEST_REDIS_ADDR for the tests and
# MODELGATE_TEST_REDIS_DIR (pid file and log) for `stop`.
set -euo pipefail

log() { echo "redis.sh: $*" >&2; }

if [ "${1:-}" = stop ]; then
	dir=${MODELGATE_TEST_REDIS_DIR:?no MODELGATE_TEST_REDIS_DIR: nothing was started}
	if [ -f "$dir/redis.pid" ]; then
		kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
	fi
	rm -rf "$dir"
	exit 0
fi

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	log "installing redis-server from Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y --no-install-recommends redis-server redis-tools >&2
fi

# A port nothing answers on now. Another process may still take it before
# redis-server binds it, so a failed start is retried on another port.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/modelgate-redis.XXXXXX")
for attempt in 1 2 3 4 5; do
	port=$(free_port)
	log "starting redis-server on 127.0.0.1:$port (attempt $attempt; pid file and log in $dir)"
	redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes \
		--save '' --appendonly no --dir "$dir" \
		--daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >&2 || continue
	for _ in $(seq 1 100); do
		if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = "PONG" ]; then
			log "redis-server answers PING (pid $(cat "$dir/redis.pid"))"
			echo "export MODELGATE_TEST_REDIS_ADDR=127.0.0.1:$port"
			echo "export MODELGATE_TEST_REDIS_DIR=$dir"
			exit 0
		fi
		sleep 0.1
	done
	log "redis-server did not start on port $port; its log:"
	cat "$dir/redis.log" >&2 || true
	if [ -f "$dir/redis.pid" ]; then
		kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
		rm -f "$dir/redis.pid"
	fi
done
rm -rf "$dir"
exit 1
