"""A2A protocol version negotiation (A2A v1.0 §3.2.6): the ``A2A-Version`` service parameter.

An absent or empty header means 0.3 per the spec.  Method names do not overlap between 0.3
(``message/send``) and 1.0 (``SendMessage``), so a request without the header that names a 1.0
method is served as 1.0: clients that forget the header still work.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import VersionNotSupportedError

V1_0 = "1.0"
V0_3 = "0.3"
SUPPORTED = (V1_0, V0_3)

VERSION_HEADERS = ("a2a-version", "opvs-version")  # lower-case: ASGI header names are


def requested_version(headers: Mapping[str, str]) -> str:
    """The version a request asks for: "1.0", "0.3" (also for none), or an error."""
    value = ""
    for name in VERSION_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            break
    if not value:
        return V0_3
    major, _, minor = value.partition(".")
    normalized = f"{major}.{minor or '0'}"
    if normalized in (V1_0, V0_3):
        return normalized
    raise VersionNotSupportedError(
        f"A2A version {value[:20]!r} is not supported; this server speaks "
        f"{', '.join(SUPPORTED)} (send the header A2A-Version: 1.0)"
    )
