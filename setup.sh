#!/usr/bin/env bash
# Sets up everything Sluice needs on a fresh machine: the Debian packages of the
# PostgreSQL backend's benchmark peer, a running PostgreSQL server, and a virtual
# environment with the project and its test dependencies.  Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

# -- Debian packages: only what is missing, quietly -------------------------------
missing=()
for pkg in postgresql-15-pgq3 wrk; do    # PgQ, the PostgreSQL backend's benchmark peer; wrk, the IDAP bench's load generator
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
  for _ in $(seq 1 30); do    # wait until it accepts connections (at most ~15 s)
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 0.5
  done
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
