#!/usr/bin/env bash
# The README's main command: install a2a-trio and serve the demo agent on 127.0.0.1:8000.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/venv.sh
exec .venv/bin/hypercorn -k trio --bind "${A2A_TRIO_BIND:-127.0.0.1:8000}" a2a_trio.app:app
