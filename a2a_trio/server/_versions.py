"""A2A protocol version negotiation (A2A v1.0 §3.2.6, §3.6): the ``A2A-Version`` service parameter.

An absent or empty header means 0.3 per the spec.  Method names do not overlap between 0.3
(``message/send``) and 1.0 (``SendMessage``), so a request without the header that names a 1.0
method is served as 1.0: clients that forget the header still work.  A client may send the
version as a request (query) parameter instead of the header, and only Major.Minor counts: a
patch number (``1.0.2``) never decides (§3.6).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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
    normalized = _major_minor(value)
    if normalized in (V1_0, V0_3):
        return normalized
    raise VersionNotSupportedError(
        f"A2A version {value[:20]!r} is not supported; this server speaks "
        f"{', '.join(SUPPORTED)} (send the header A2A-Version: 1.0)"
    )


def _major_minor(value: str) -> str:
    """``value`` as Major.Minor: ``1`` is ``1.0``, and a numeric patch is dropped (``1.0.2``)."""
    major, _, rest = value.partition(".")
    minor, _, patch = rest.partition(".")
    if patch and not (patch.isascii() and patch.isdigit()):
        return value
    return f"{major}.{minor or '0'}"


def version_from_query(
    headers: dict[str, str], query: Iterable[tuple[str, str]]
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The headers with a version sent as a request parameter (``?A2A-Version=1.0``, any case)
    moved into them, and the query without it; a version header sent as well wins.  Without
    such a parameter the headers come back as they are, not copied (every request comes here)."""
    params: dict[str, str] = {}
    rest: list[tuple[str, str]] = []
    for name, value in query:
        key = name.lower()
        if key in VERSION_HEADERS:
            params[key] = value
        else:
            rest.append((name, value))
    if not params or any(headers.get(header, "").strip() for header in VERSION_HEADERS):
        return headers, rest
    return headers | params, rest
