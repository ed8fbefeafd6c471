#!/usr/bin/env bash
# Sets up everything Sluice needs on a fresh machine: the Debian packages of the
# PostgreSQL backend's benchmark peer, a running PostgreSQL server, and a virtual
# environment with the project and its test dependencies.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

# -- Debian packages: only what is missing, quietly -------------------------------
missing=()
# PgQ, the PostgreSQL backend's benchmark peer; wrk, the IDAP bench's load generator;
# wal2json, the logical decoding plugin Streams capture reads PostgreSQL's WAL through;
# chromium + chromium-driver, the real browser the dashboard's tests drive (Selenium)
for pkg in postgresql-15-pgq3 wrk postgresql-15-wal2json chromium chromium-driver; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# -- PostgreSQL (the server backend; its tests fail, never skip, when it is down) --
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  for version in $(ls /etc/postgresql); do
    if ! pg_ctlcluster "$version" main status >/dev/null 2>&1; then
      pg_ctlcluster --skip-systemctl-redirect "$version" main start
    fi
  done
  wait_for_pg() {
    for _ in $(seq 1 30); do    # wait until it accepts connections (at most ~15 s)
      pg_isready -q -h 127.0.0.1 -p 5432 && break
      sleep 0.5
    done
  }
  wait_for_pg
  # Streams capture decodes the WAL: wal_level = logical (a restart), and on servers that
  # list the allowed output plugins, wal2json among them (a reload).
  psql_admin() { psql -h 127.0.0.1 -U postgres -d postgres -Atqc "$1"; }
  if psql_admin "SELECT 1" >/dev/null 2>&1; then
    if [ "$(psql_admin "SELECT 1 FROM pg_settings WHERE name = 'output_plugin_libraries'")" = 1 ] &&
       ! psql_admin "SHOW output_plugin_libraries" | grep -q wal2json; then
      psql_admin "ALTER SYSTEM SET output_plugin_libraries = 'pgoutput', 'test_decoding', 'wal2json'"
      psql_admin "SELECT pg_reload_conf()" >/dev/null
    fi
    restart=
    if [ "$(psql_admin "SHOW wal_level")" != logical ]; then
      psql_admin "ALTER SYSTEM SET wal_level = logical"
      restart=1
    fi
    # the suite runs on several pytest-xdist workers, each with its stores, hosts, capture
    # and apply processes: 100 connections (the default) run out (a restart)
    if [ "$(psql_admin "SHOW max_connections")" -lt 300 ]; then
      psql_admin "ALTER SYSTEM SET max_connections = 300"
      restart=1
    fi
    if [ -n "$restart" ]; then
      for version in $(ls /etc/postgresql); do
        pg_ctlcluster --skip-systemctl-redirect "$version" main restart
      done
      wait_for_pg
    fi
    # The tests' databases keep their relation files in a tablespace on tmpfs (tests/conftest.py;
    # DESIGN-NOTES "Test suite time"): every PostgreSQL test creates and drops a store of ~25
    # tables on the ext4 disk, ~0.4 s of waits each. After a reboot the directory is gone: the
    # empty tablespace is dropped and made again (one still holding a database stays broken, and
    # the tests fall back to the default tablespace).
    ts_dir=/dev/shm/sluice-test-tablespace
    if [ -d /dev/shm ] && id postgres >/dev/null 2>&1; then
      if [ -n "$(psql_admin "SELECT 1 FROM pg_tablespace WHERE spcname = 'sluice_test_mem'")" ] &&
         ! ls -d "$ts_dir"/PG_* >/dev/null 2>&1; then
        psql_admin "DROP TABLESPACE sluice_test_mem" >/dev/null 2>&1 || true
      fi
      if [ -z "$(psql_admin "SELECT 1 FROM pg_tablespace WHERE spcname = 'sluice_test_mem'")" ]; then
        mkdir -p "$ts_dir" && chown postgres:postgres "$ts_dir" && chmod 700 "$ts_dir" &&
          psql_admin "CREATE TABLESPACE sluice_test_mem LOCATION '$ts_dir'" || true
      fi
    fi
  fi
fi

# -- RabbitMQ: the shovel plugin is bench_propagation.py's peer (issue 14 §2) -----------
if command -v rabbitmq-plugins >/dev/null 2>&1; then
  rabbitmq-plugins enable rabbitmq_shovel >/dev/null 2>&1 || true
fi

# -- Python -----------------------------------------------------------------------
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
.venv/bin/python -m pip install --quiet -e '.[test,bench]'
echo "setup done: .venv ready"
