"""The trio-native A2A client.

::

    async with open_client("http://127.0.0.1:8000") as client:
        task = await client.send("hello")
        async with client.stream("hello") as events:
            async for event in events:
                ...
"""

from ._auth import ApiKeyAuth, BearerAuth, HeaderAuth, HeaderProvider
from ._bindings import HTTP_JSON, JSONRPC
from ._card import CardCache, fetch_card
from ._client import Client, TaskPages, open_client
from ._errors import (
    AgentCardError,
    ClientError,
    InvalidResponseError,
    RemoteError,
    TransportError,
)
from ._options import Limits, Reconnect, Timeouts
from ._signing import CardVerifier
from ._stream import EventStream
from ._transport import ClientStatistics, TrustedOrigins

__all__ = [
    "HTTP_JSON",
    "JSONRPC",
    "AgentCardError",
    "ApiKeyAuth",
    "BearerAuth",
    "CardCache",
    "CardVerifier",
    "Client",
    "ClientError",
    "ClientStatistics",
    "EventStream",
    "HeaderAuth",
    "HeaderProvider",
    "InvalidResponseError",
    "Limits",
    "Reconnect",
    "RemoteError",
    "TaskPages",
    "Timeouts",
    "TransportError",
    "TrustedOrigins",
    "fetch_card",
    "open_client",
]
