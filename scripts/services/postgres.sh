#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests, on a free loopback port.
#
#   eval "$(bash scripts/services/postgres.sh)"        # start; exports the DSN
#   bash scripts/services/postgres.sh stop              # stop it, remove its files
#   bash scripts/services/postgres.sh down              # stop the server, keep its files
#   bash scripts/services/postgres.sh up                # start it again on its port
#   bash scripts/services/postgres.sh bin               # the newest server's bin folder
#
# Starting installs PostgreSQL from the Debian packages when it is missing
# (as root), creates a cluster in a temporary folder owned by a non-root
# user (PostgreSQL refuses to run as root), and prints on stdout:
#   export MODELGATE_TEST_POSTGRES_DSN=postgres://modelgate:...@127.0.0.1:PORT/modelgate?sslmode=disable
#   export MODELGATE_TEST_POSTGRES_DIR=/tmp/modelgate-pg.XXXXXX
# Everything else goes to stderr.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

# pg_bin prints the bin folder of the newest installed PostgreSQL server.
pg_bin() {
	local bin
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
	[ -n "$bin" ] && [ -x "$bin/postgres" ] && echo "$bin"
}

# as_owner runs a command as the cluster's owner: the postgres user when
# this script runs as root, else the caller.
as_owner() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start() {
	local bin
	if ! bin=$(pg_bin); then
		if [ "$(id -u)" != 0 ]; then
			log "PostgreSQL is not installed and installing it needs root: apt-get install postgresql"
			exit 1
		fi
		log "installing PostgreSQL from the Debian packages"
		apt-get update >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
		bin=$(pg_bin)
	fi
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi

	local dir password
	dir=$(mktemp -d /tmp/modelgate-pg.XXXXXX)
	chmod 700 "$dir"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir"
	password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	printf '%s\n' "$password" >"$dir/pwfile"
	[ "$(id -u)" = 0 ] && chown postgres: "$dir/pwfile"
	as_owner "$bin/initdb" -D "$dir/data" -U modelgate --pwfile="$dir/pwfile" \
		--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	rm "$dir/pwfile"

	local port attempt
	for attempt in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			continue # taken
		fi
		if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir" start >&2; then
			break
		fi
		port=
	done
	if [ -z "$port" ]; then
		cat "$dir/server.log" >&2
		log "the server did not start"
		exit 1
	fi
	echo "$port" >"$dir/port"
	as_owner "$bin/createdb" -h "$dir" -p "$port" -U modelgate modelgate
	log "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, files in $dir"
	echo "export MODELGATE_TEST_POSTGRES_DSN='postgres://modelgate:$password@127.0.0.1:$port/modelgate?sslmode=disable'"
	echo "export MODELGATE_TEST_POSTGRES_DIR='$dir'"
}

stop() {
	local dir=${MODELGATE_TEST_POSTGRES_DIR:-}
	if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
		log "nothing to stop: MODELGATE_TEST_POSTGRES_DIR names no cluster"
		return 0
	fi
	as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
	rm -rf "$dir"
}

# down and up stop and start the server of MODELGATE_TEST_POSTGRES_DIR
# in place: a database outage for tests (internal/testpg.Server).
down() {
	as_owner "$(pg_bin)/pg_ctl" -D "$MODELGATE_TEST_POSTGRES_DIR/data" -m fast -w stop >&2
}

up() {
	local dir=$MODELGATE_TEST_POSTGRES_DIR
	as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $(cat "$dir/port") -k $dir" start >&2
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
down) down ;;
up) up ;;
bin) pg_bin ;;
*)
	log "usage: postgres.sh [start|stop|down|up|bin]"
	exit 2
	;;
esac
