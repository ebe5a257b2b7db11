#!/usr/bin/env bash
# pgvector (the vector extension) on the PostgreSQL server that
# scripts/services/postgres.sh started, for the vector store tests.
#
#   bash scripts/services/pgvector.sh install        # before any server starts
#   eval "$(bash scripts/services/postgres.sh)"
#   eval "$(bash scripts/services/pgvector.sh)"     # exports the DSN
#
# `install` builds and installs the extension for the newest PostgreSQL
# installed, with no server running: the packages the build needs may
# upgrade the server's own package, and a server already running on the
# old binaries then fails to load its libraries. Without a PostgreSQL
# installed it does nothing (postgres.sh installs one, and this script's
# second call builds against it).
#
# When the server has no vector extension, it is built from the pinned
# pgvector source (fetched as a Go module, the one download path the tests
# already use) against the server's own major version (Debian's
# postgresql-server-dev-<major> gives pg_config and PGXS) in a temporary
# folder and installed into the server's folders (as root); a server that
# has it is left as it is. Then the extension is created in the public
# schema of the test database, before any test runs: the schemas of the
# plain PostgreSQL tests (internal/testpg.DSN) leave public out of their
# search_path, so their stores find vector stores off, and those of the
# vector tests (testpg.VectorDSN) end with it. Prints on stdout:
#   export MODELGATE_TEST_PGVECTOR_DSN=<MODELGATE_TEST_POSTGRES_DSN>
# Everything else goes to stderr. The server's stop removes it all but
# the installed extension.
set -euo pipefail

version=0.8.1

log() { echo "pgvector.sh: $*" >&2; }
fail() {
	log "$*"
	exit 1
}

# installed reports whether PostgreSQL $1 has the vector extension.
installed() {
	[ -f "$("/usr/lib/postgresql/$1/bin/pg_config" --sharedir)/extension/vector.control" ]
}

# install builds pgvector $version against the server's major version
# and installs it into that server's folders.
install() {
	local major=$1 bin=/usr/lib/postgresql/$1/bin
	[ "$(id -u)" = 0 ] || fail "the PostgreSQL $major server has no vector extension and installing pgvector needs root"
	command -v go >/dev/null || fail "go is missing: it fetches the pgvector source"
	if [ ! -f "$("$bin/pg_config" --includedir-server)/postgres.h" ] || [ ! -f "$("$bin/pg_config" --pgxs)" ] ||
		! command -v make >/dev/null || ! command -v gcc >/dev/null; then
		log "installing postgresql-server-dev-$major, make and gcc from the Debian packages"
		apt-get update >&2 || fail "apt-get update failed"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			"postgresql-server-dev-$major" make gcc libc6-dev >&2 ||
			fail "installing postgresql-server-dev-$major failed"
	fi
	local work src
	work=$(mktemp -d /tmp/modelgate-pgvector.XXXXXX)
	# shellcheck disable=SC2064 # the folder is known now
	trap "rm -rf '$work'" EXIT
	src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/pgvector/pgvector@v$version" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || true
	[ -n "$src" ] && [ -f "$src/Makefile" ] || fail "fetching the pgvector $version source as a Go module failed"
	cp -R "$src" "$work/pgvector"
	chmod -R u+w "$work/pgvector"
	log "building pgvector $version for PostgreSQL $major"
	make -C "$work/pgvector" PG_CONFIG="$bin/pg_config" >"$work/build.log" 2>&1 ||
		{ tail -n 40 "$work/build.log" >&2; fail "building pgvector $version failed (the build's last lines above)"; }
	make -C "$work/pgvector" PG_CONFIG="$bin/pg_config" install >>"$work/build.log" 2>&1 ||
		{ tail -n 40 "$work/build.log" >&2; fail "installing pgvector $version failed (the build's last lines above)"; }
	log "pgvector $version installed into $("$bin/pg_config" --sharedir)/extension"
}

if [ "${1:-}" = install ]; then
	if ! bin=$(bash "$(dirname "$0")/postgres.sh" bin); then
		log "no PostgreSQL installed yet: the extension is built once postgres.sh has installed it"
		exit 0
	fi
	major=$(basename "$(dirname "$bin")")
	installed "$major" || install "$major"
	exit 0
fi

dsn=${MODELGATE_TEST_POSTGRES_DSN:-}
[ -n "$dsn" ] || fail "no MODELGATE_TEST_POSTGRES_DSN: start the server first (eval \"\$(bash scripts/services/postgres.sh)\")"

# query prints one value the server answers.
query() { psql "$dsn" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

major=$(query "SELECT current_setting('server_version_num')::int / 10000") ||
	fail "the server at MODELGATE_TEST_POSTGRES_DSN does not answer"
if [ "$(query "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'")" = 0 ]; then
	install "$major"
	# The headers' package may have upgraded the server's own to a newer
	# minor version: a running server then fails to load its libraries
	# (plpgsql.so) until it restarts on the new binaries.
	binaries=$("/usr/lib/postgresql/$major/bin/postgres" --version | awk '{print $3}')
	if [ "$(query "SELECT split_part(current_setting('server_version'), ' ', 1)")" != "$binaries" ]; then
		log "the server was upgraded to $binaries with its headers: restarting it"
		bash "$(dirname "$0")/postgres.sh" down
		bash "$(dirname "$0")/postgres.sh" up
	fi
fi
query "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector SCHEMA public" >/dev/null ||
	fail "creating the vector extension failed"
log "pgvector $(query "SELECT extversion FROM pg_extension WHERE extname = 'vector'") in the public schema of the test database"
echo "export MODELGATE_TEST_PGVECTOR_DSN='$dsn'"
