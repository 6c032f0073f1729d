# Sourced by .ci/run: start a throwaway PostgreSQL server for the tests and export
# AGENT_HOST_TEST_POSTGRES_DSN; the server and its directory go away when the shell exits.
# Debian: installs the server package when initdb is missing (CI runs as root). The server
# refuses to run as root, so as root it runs as an unprivileged user (agenthost, created if
# missing). It listens on 127.0.0.1 on a port it could bind (retried with another one when
# taken), with trust authentication for local TCP, and fsync=off for speed unless PG_FSYNC=on.

_pg_bindir() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$dir" ]; then echo "$dir"; else dirname "$(command -v initdb)"; fi
}

if ! command -v initdb >/dev/null 2>&1 && [ -z "$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null)" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql
    else
        echo ".ci/postgres.sh: initdb not found and cannot install postgresql" >&2
        exit 1
    fi
fi
PG_BIN="$(_pg_bindir)"

PG_DIR="$(mktemp -d /tmp/agent-host-pg.XXXXXX)"
if [ "$(id -u)" = 0 ]; then
    id agenthost >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin agenthost
    chown agenthost "$PG_DIR"
    _pg_as() { runuser -u agenthost -- "$@"; }
else
    _pg_as() { "$@"; }
fi

_pg_stop() {
    _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
}
trap _pg_stop EXIT

_pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U agenthost -A trust -E UTF8 --no-locale >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; exit 1; }
# PostgreSQL cannot be asked for "any free port", and a port found free by binding and closing
# a socket can be taken before the server binds it. So: try a random unprivileged port and, if
# the server could not bind it (someone else holds it), another one; any other failure is fatal.
_pg_started=""
for _pg_attempt in 1 2 3 4 5 6 7 8 9 10; do
    PG_PORT="$(( 20000 + RANDOM % 40000 ))"
    rm -f "$PG_DIR/server.log"
    if _pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=${PG_FSYNC:-off}" start >/dev/null; then
        _pg_started=1
        break
    fi
    grep -q "could not bind\|could not create any TCP/IP sockets\|Address already in use" \
        "$PG_DIR/server.log" || break
    echo ".ci/postgres.sh: port $PG_PORT is taken, trying another" >&2
done
[ -n "$_pg_started" ] || { cat "$PG_DIR/server.log" >&2; exit 1; }
export AGENT_HOST_TEST_POSTGRES_DSN="postgresql://agenthost@127.0.0.1:$PG_PORT/postgres"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') for the tests: $AGENT_HOST_TEST_POSTGRES_DSN"
