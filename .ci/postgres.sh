# Sourced by .ci/run: start a throwaway PostgreSQL server for the tests and export
# AGENT_HOST_TEST_POSTGRES_DSN; the server and its directory go away when the shell exits.
# Debian: installs the server package when initdb is missing (CI runs as root). The server
# refuses to run as root, so as root it runs as an unprivileged user (agenthost, created if
# missing). It listens on 127.0.0.1 on a free port, with trust authentication for local TCP.

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
PG_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
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
_pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off" start >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; exit 1; }
export AGENT_HOST_TEST_POSTGRES_DSN="postgresql://agenthost@127.0.0.1:$PG_PORT/postgres"
echo "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') for the tests: $AGENT_HOST_TEST_POSTGRES_DSN"
