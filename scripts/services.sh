# Sourced by scripts/run.sh and scripts/test.sh: makes sure PostgreSQL and
# Redis are installed and running on 127.0.0.1 (installing them with apt on a
# fresh Debian machine), and exports CAIRN_PG_ADMIN_URL for a superuser.

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_packages() {
    local missing=()
    command -v pg_ctlcluster >/dev/null 2>&1 || missing+=(postgresql postgresql-contrib)
    command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
    command -v pg_isready >/dev/null 2>&1 || missing+=(postgresql-client)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing ${missing[*]} with apt" >&2
        as_root apt-get update -qq
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}

ensure_postgres() {
    if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
        local version
        version=$(ls /etc/postgresql | sort -V | tail -n 1)
        echo "starting PostgreSQL $version" >&2
        as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
        for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
    fi
    if psql "postgres://postgres@127.0.0.1:5432/postgres" -Atqc 'SELECT 1' >/dev/null 2>&1; then
        export CAIRN_PG_ADMIN_URL="postgres://postgres@127.0.0.1:5432/postgres"
    else
        # A fresh Debian cluster asks for a password over TCP: give postgres one for local use.
        as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'cairn-local'\"" >/dev/null
        export CAIRN_PG_ADMIN_URL="postgres://postgres:cairn-local@127.0.0.1:5432/postgres"
    fi
}

ensure_redis() {
    if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
        echo "starting Redis" >&2
        redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
        for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
    fi
}

ensure_services() {
    ensure_packages
    ensure_postgres
    ensure_redis
}
