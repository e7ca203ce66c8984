"""Wire codecs: the only code that builds or picks apart wire dicts.

``V1`` speaks A2A v1.0 ProtoJSON; ``V03`` speaks the v0.3 JSON forms of the same model and
``V03_PROTO`` the v0.3 proto's ProtoJSON (the v0.3 HTTP+JSON binding).
``loads``/``dumps`` frame JSON documents; ``SSEDecoder`` parses ``text/event-stream`` bodies.
"""

from ..model import MAX_JSON_DEPTH
from ._common import camel, dumps, expect_object, format_timestamp, loads, parse_timestamp
from ._sse import SSEDecoder, SSEError, SSEEvent
from ._v03 import V03, V03Codec
from ._v03_proto import V03_PROTO, V03ProtoCodec
from ._v1 import V1, V1Codec

__all__ = [
    "MAX_JSON_DEPTH",
    "V03",
    "V03_PROTO",
    "V1",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "V03Codec",
    "V03ProtoCodec",
    "V1Codec",
    "camel",
    "dumps",
    "expect_object",
    "format_timestamp",
    "loads",
    "parse_timestamp",
]
