"""Wire codecs: the only code that builds or picks apart wire dicts.

``V1`` speaks A2A v1.0 ProtoJSON.  ``loads``/``dumps`` frame JSON documents;
``SSEDecoder`` parses ``text/event-stream`` bodies.
"""

from ._common import MAX_JSON_DEPTH, camel, dumps, format_timestamp, loads, parse_timestamp
from ._sse import SSEDecoder, SSEError, SSEEvent
from ._v1 import V1, V1Codec

__all__ = [
    "MAX_JSON_DEPTH",
    "V1",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "V1Codec",
    "camel",
    "dumps",
    "format_timestamp",
    "loads",
    "parse_timestamp",
]
