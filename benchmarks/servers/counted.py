"""Run a benchmark server script while counting the Python functions it runs.

    python counted.py SCRIPT [the script's own arguments]

For ``benchmarks/callcount.py``.  Counting is ``sys.monitoring``: a start of every Python
function (coroutines and generators included) and every resumption of a suspended one, by
code object.  It begins on SIGUSR1; on SIGUSR2 it stops and the counts go, as JSON, to the
file ``A2A_BENCH_COUNTS`` names.  Calls into C (orjson, builtins, the socket) are not counted.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
from collections import Counter
from types import CodeType, FrameType

TOOL = sys.monitoring.PROFILER_ID
EVENTS = sys.monitoring.events

starts: Counter[CodeType] = Counter()
resumes: Counter[CodeType] = Counter()


def _started(code: CodeType, _offset: int) -> None:
    starts[code] += 1


def _resumed(code: CodeType, _offset: int) -> None:
    resumes[code] += 1


def _begin(_signum: int, _frame: FrameType | None) -> None:
    starts.clear()
    resumes.clear()
    sys.monitoring.set_events(TOOL, EVENTS.PY_START | EVENTS.PY_RESUME)


def _row(code: CodeType) -> dict[str, object]:
    return {
        "file": code.co_filename,
        "function": code.co_qualname,
        "starts": starts[code],
        "resumes": resumes[code],
    }


def _end(_signum: int, _frame: FrameType | None) -> None:
    sys.monitoring.set_events(TOOL, 0)
    rows = [_row(code) for code in starts.keys() | resumes.keys()]
    out = os.environ["A2A_BENCH_COUNTS"]
    with open(out + ".tmp", "w", encoding="utf-8") as file:
        json.dump(rows, file)
    os.replace(out + ".tmp", out)


def main() -> None:
    script = os.path.abspath(sys.argv[1])
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(script)
    sys.monitoring.use_tool_id(TOOL, "a2a_trio callcount")
    sys.monitoring.register_callback(TOOL, EVENTS.PY_START, _started)
    sys.monitoring.register_callback(TOOL, EVENTS.PY_RESUME, _resumed)
    signal.signal(signal.SIGUSR1, _begin)
    signal.signal(signal.SIGUSR2, _end)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
