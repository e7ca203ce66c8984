"""The official A2A JavaScript SDK (``@a2a-js/sdk``, pinned in ``package-lock.json``) as a peer.

Its packages are installed by ``npm ci`` in this folder (``scripts/test.sh`` does it).  Without
node or without them the tests skip, saying what is missing; under ``CI`` they fail instead.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from prerequisites import missing_prerequisite

HERE = Path(__file__).parent


def node() -> str:
    """The ``node`` executable, once this folder's packages are installed as locked."""
    executable = shutil.which("node")
    lock = json.loads((HERE / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/@a2a-js/sdk"]["version"]
    installed = HERE / "node_modules" / "@a2a-js" / "sdk" / "package.json"
    if executable is None:
        missing = "node (Node.js 20 or later) is not on PATH"
    elif not installed.exists() or json.loads(installed.read_text())["version"] != pinned:
        missing = f"@a2a-js/sdk {pinned} is not installed (run: npm ci --prefix tests/jspeer)"
    else:
        return executable
    ci_reason = "CI must run the JavaScript SDK interop tests (scripts/test.sh installs it)"
    missing_prerequisite(missing, in_ci=f"{missing}: {ci_reason}")
