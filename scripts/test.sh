#!/usr/bin/env bash
# The README's test command: install everything and run lint, types and the test suite.
# PostgreSQL tests run when A2A_TRIO_TEST_PG_URL is set (.ci/run starts a server and sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh dev
# Interop peer for the legacy-dialect tests: only its standalone stream parser is used, and its
# full dependency set conflicts with ours, so it is installed without dependencies.
.venv/bin/python -m pip install -q --no-deps "mcp-mesh==3.8.0"
# Interop peer for tests/jspeer: the official A2A JavaScript SDK, exactly as its lock file pins
# it. Without Node.js those tests skip, saying so (under CI they fail).
if command -v npm >/dev/null; then
    npm ci --prefix tests/jspeer --no-audit --no-fund --loglevel=error
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy --strict a2a_trio
# Coverage is measured on every run; the floor only ever rises (measured 93% when it was set).
.venv/bin/python -m coverage run -m pytest "$@"
.venv/bin/python -m coverage report --fail-under=90 | tail -n 1
