"""What a test does when something outside the project it needs is not there."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing_prerequisite(reason: str, *, in_ci: str) -> NoReturn:
    """Skip, saying ``reason``, on a developer machine; FAIL with ``in_ci`` under CI (``CI``
    set), which installs every prerequisite, so a missing one there is a broken set-up, never
    a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(in_ci)
    pytest.skip(reason)
