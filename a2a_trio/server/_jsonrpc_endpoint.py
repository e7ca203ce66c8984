"""The JSON-RPC endpoint, served as raw ASGI in front of the quart-trio app.

Why not a Quart route: the endpoint is the hot path (every send, every stream), and measured
under the same load Quart's request/response layer cost about a third of the server's CPU per
request (docs/benchmarks.md).  Everything else (agent card, REST, legacy surfaces) stays on
Quart.  Raw ASGI also gives each event stream the shape the architecture wants: once it waits
for events, its own small nursery holding the subscriber loop and a watcher of the client's
disconnect (and keepalive timer), which cancels that nursery and nothing else.

:func:`answer` is the binding itself and knows nothing of ASGI: headers and body in, a JSON
reply or an event stream out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl

import attrs
import trio
from quart.wrappers.base import ClientDisconnectedError

from ..errors import (
    A2AError,
    AuthenticationRequiredError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    Mention,
    MethodNotFoundError,
    Spelling,
    VersionNotSupportedError,
    Vocabulary,
)
from ..runtime import LogEntry, SubscriberOverflow, TaskStream
from ..wire import V1, dumps
from . import _jsonrpc as rpc
from ._body import BodyTooLargeError, BodyTooSlowError, body_deadline
from ._handler import UNEXPECTED_FAILURE
from ._rest import error_info
from ._rpc_methods import V1_METHODS, CallInfo, Method, StreamingMethod
from ._rpc_v03 import V03_METHODS, V03_VOCABULARY, V1_NAME_OF_V03
from ._sse import KEEPALIVE, STREAM_HEADERS, encode_event
from ._streaming import stream_boundary
from ._tenants import authenticated_owner, caller_scope, request_headers
from ._versions import V0_3, V1_0, requested_version, version_from_query

if TYPE_CHECKING:
    from ._app import A2AServer

type Receive = Callable[[], Awaitable[dict[str, Any]]]
type Send = Callable[[dict[str, Any]], Awaitable[None]]

logger = logging.getLogger("a2a_trio.server")

JSON_TYPES: Final = ("application/json", "application/a2a+json")


def wrong_content_type(media_type: str) -> str:
    """The refusal of a body that is not JSON, the same on every binding that checks (each
    with its own error: JSON-RPC's -32600, REST's ContentTypeNotSupported)."""
    shown = media_type[:60] or "missing"
    return f"Content-Type must be {' or '.join(JSON_TYPES)}, not {shown!r}"


METHOD_TABLES: Final[dict[str, dict[str, Method]]] = {V1_0: V1_METHODS, V0_3: V03_METHODS}
"""The JSON-RPC method table of each protocol version."""
BURST: Final = 64
"""The most events a stream sends in one body chunk: a long replay goes out in several, each
send a turn for the replica's other streams, instead of all rendered in one go."""
SPELLINGS: Final[dict[str, Spelling]] = {V1_0: Vocabulary(V1.spell), V0_3: V03_VOCABULARY}
"""How each protocol version's errors name states and roles (as its codec writes them), and
the methods and card fields they point to."""


@attrs.frozen
class JsonReply:
    status: int
    body: bytes


@attrs.frozen
class StreamReply:
    stream: TaskStream
    rid: rpc.RequestId
    method: StreamingMethod
    headers: Mapping[str, str]
    name: str
    head: bytes = attrs.field(init=False)
    """Each event's response up to its result (``rpc.success_head``), encoded once."""

    @head.default
    def _head(self) -> bytes:
        return rpc.success_head(self.rid)

    def failure_event(self) -> bytes:
        """The internal error, with the request's id in its version's shape, as the last
        event of a stream an unexpected failure ended (``stream_boundary``)."""
        error = InternalError(UNEXPECTED_FAILURE)
        return encode_event(dumps(error_response(self.rid, error, self.headers, self.name)))


type Reply = JsonReply | StreamReply


def json_reply(document: Any, *, status: int = 200) -> JsonReply:
    return JsonReply(status, dumps(document))


NO_CONTENT: Final = JsonReply(204, b"")


def _served_version(requested: str, name: str | None) -> str:
    """No header (= 0.3) but a 1.0 method name: it is served as 1.0."""
    return V1_0 if requested == V0_3 and name in V1_METHODS else requested


def lookup(name: str, headers: Mapping[str, str]) -> Method:
    """The method ``name`` in the table of the requested protocol version."""
    version = _served_version(requested_version(headers), name)
    method = METHOD_TABLES[version].get(name)
    if method is None:
        raise MethodNotFoundError(
            f"Method not found: {name[:100]!r}{_v03_name_hint(name, version)}"
        )
    return method


def _v03_name_hint(name: str, version: str) -> str:
    """A v0.3 method name sent with ``A2A-Version: 1.0`` (a client mixing the two versions):
    the v1.0 name, or how to speak v0.3."""
    v1_name = V1_NAME_OF_V03.get(name) if version == V1_0 else None
    if v1_name is None:
        return ""
    return (
        f" (an A2A v0.3 method; the request's A2A-Version header asks for 1.0, which calls it"
        f" {v1_name!r}: use that name, or send no A2A-Version header to speak v0.3)"
    )


def last_event_id(value: str | None) -> int | None:
    """The ``Last-Event-ID`` header as a sequence number (absent: ``None``)."""
    if value is None or not value.strip():
        return None
    digits = value.strip()
    if not (digits.isascii() and digits.isdigit()):  # int() would take "-1", "+5", "1_0"
        raise InvalidParamsError(
            f"Last-Event-ID {digits!r} is not an event id this server sent (it numbers a task's"
            " events 1, 2, ...); resume from an id the stream carried, or subscribe without one"
        )
    return int(digits)


async def answer(
    server: A2AServer, headers: Mapping[str, str], body: bytes, *, owner: str = ""
) -> Reply:
    """Serve one JSON-RPC request (``headers`` keys lower-case) for the caller ``owner``."""
    document: Any = None
    call: rpc.RpcRequest | None = None
    try:
        document = rpc.load_request(body)
        call = rpc.parse_request(document)
        method = lookup(call.method, headers)
        params = method.decode(call.params)
        scope = caller_scope(server.config, getattr(params, "tenant", ""), owner)
        info = CallInfo(last_event_id=last_event_id(headers.get("last-event-id")))
        if isinstance(method, StreamingMethod):
            stream = await method.call(server.handler, scope, params, info)
            if call.is_notification:
                stream.close()
                return NO_CONTENT
            return StreamReply(stream, call.id, method, headers, call.method)
        result = method.encode(await method.call(server.handler, scope, params, info))
    except A2AError as error:
        return _failed(document, call, error, headers)
    except Exception:  # the request's boundary: a bug (ours, a custom store's) is never leaked
        logger.exception("JSON-RPC request failed on an unexpected error")
        return _failed(document, call, InternalError(UNEXPECTED_FAILURE), headers)
    if call.is_notification:
        return NO_CONTENT
    return json_reply(rpc.success(call.id, result))


def _failed(
    document: Any, call: rpc.RpcRequest | None, error: A2AError, headers: Mapping[str, str]
) -> Reply:
    if call is not None and call.is_notification:
        return NO_CONTENT  # JSON-RPC 2.0 §4.1: a notification gets no reply
    name = call.method if call is not None else None
    return json_reply(error_response(rpc.request_id(document), error, headers, name))


def error_response(
    rid: rpc.RequestId, error: A2AError, headers: Mapping[str, str], name: str | None = None
) -> dict[str, Any]:
    """The JSON-RPC error response in the shape of the version serving the call: in 1.0 its
    ``data`` is a list holding a ``google.rpc.ErrorInfo`` with the A2A reason (A2A v1.0
    §9.5), which tells errors sharing a code apart; in 0.3 it is the error's own data.  A
    version this server does not speak gets 1.0's shape, the only one that can name it.  The
    message names states and roles as that version writes them (``SPELLINGS``)."""
    try:
        version = _served_version(requested_version(headers), name)
    except VersionNotSupportedError:
        version = V1_0
    error = error.spelled(SPELLINGS[version])
    data = [error_info(error)] if version == V1_0 else error.data
    return rpc.failure(rid, error, data)


class ClientGone(Exception):
    """The client disconnected before its request was complete."""


async def read_body(receive: Receive, headers: Mapping[str, str], limit: int) -> bytes:
    """The request body, refused as soon as it passes ``limit`` bytes, whatever its framing.

    With a ``Content-Length`` the body is complete once that many bytes arrived: hypercorn
    delivers the end of the body as a separate empty message, and not waiting for it saves a
    scheduler round per request (the watcher of a stream's disconnect skips it later).
    """
    declared = headers.get("content-length", "")
    expected = int(declared) if declared.isdigit() else None
    if expected is not None and expected > limit:
        raise BodyTooLargeError(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLargeError(limit)
        chunks.append(chunk)
        if size == expected or not message.get("more_body", False):
            return b"".join(chunks)


JSON_HEADERS: Final = [(b"content-type", b"application/json")]
CHALLENGE: Final = [(b"www-authenticate", b"Bearer")]
RAW_STREAM_HEADERS: Final = [(k.lower().encode(), v.encode()) for k, v in STREAM_HEADERS.items()]


class JsonRpcEndpoint:
    """ASGI app: the JSON-RPC endpoint at ``path``; everything else goes to ``fallback``."""

    def __init__(self, server: A2AServer, fallback: Any) -> None:
        self.server = server
        self.fallback = fallback
        self.path = server.config.jsonrpc_path

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            # Quart raises this (in its nursery's group) when an answer is ready only after its
            # client has gone, from a wait no cancellation reaches (a store call in a thread):
            # nothing failed, and there is nobody to tell.
            with suppress(ClientDisconnectedError):
                await self.fallback(scope, receive, send)
        elif scope["method"] == "POST":
            await self._handle(scope, receive, send)
        else:  # JSON, like every other refusal here, not the fallback's 404 page
            headers = _headers(scope)
            allow = [(b"allow", rpc.ALLOW.encode())]
            wrong = rpc.wrong_verb(scope["method"], Mention.PUBLIC_CARD.value)
            await _refuse(send, headers, wrong, allow, status=405)

    async def _handle(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        limit = self.server.config.max_body_bytes
        try:
            owner = await authenticated_owner(self.server.config, headers)
        except AuthenticationRequiredError as refused:
            # -32001 is also TaskNotFound: the ErrorInfo reason tells them apart, in 0.3 too.
            refused.data = [error_info(refused)]
            await _refuse(send, headers, refused, CHALLENGE)
            return
        except A2AError as failed:  # the hook's own fault (InternalError), or its refusal
            await _refuse(send, headers, failed)
            return
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if media_type not in JSON_TYPES:
            wrong_type = InvalidRequestError(wrong_content_type(media_type))
            await _refuse(send, headers, wrong_type, status=415)
            return
        try:
            with body_deadline(self.server.config.body_timeout):
                body = await read_body(receive, headers, limit)
        except (BodyTooLargeError, BodyTooSlowError) as refused:
            await _refuse(send, headers, refused)
            return
        except ClientGone:
            return
        reply = await answer(self.server, headers, body, owner=owner)
        if isinstance(reply, JsonReply):
            await _send_json(send, reply)
        else:
            await _send_stream(receive, send, reply, self.server.config.keepalive)


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    """The request's headers, with a version sent as a request parameter among them."""
    headers = request_headers(
        (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]
    )
    query_string = scope.get("query_string", b"")
    if not query_string:  # nearly every JSON-RPC request: nothing to parse
        return headers
    query = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    return version_from_query(headers, query)[0]


async def _refuse(
    send: Send,
    headers: Mapping[str, str],
    error: A2AError,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    status: int | None = None,
) -> None:
    """Answer before the body is read: a JSON-RPC error with a null id."""
    reply = json_reply(error_response(None, error, headers), status=status or error.http_status)
    await _send_json(send, reply, extra)


async def _send_json(
    send: Send, reply: JsonReply, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    headers = [(b"content-length", str(len(reply.body)).encode()), *(extra or ())]
    if reply.body:
        headers += JSON_HEADERS
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body, "more_body": False})


async def _send_stream(receive: Receive, send: Send, reply: StreamReply, keepalive: float) -> None:
    """Send one event stream: its events as they come, the last of them with the end of the
    body.  Once the stream has to wait for an event, it gets its own nursery: the pump, and a
    watcher that sends keepalive comments while it is idle and cancels that nursery when the
    client disconnects.  A stream whose events are all there already (a quick task's) never
    waits, so it needs no nursery, watcher or timer.  The task's job runs elsewhere (the
    runtime's nursery) and is not affected.  An unexpected failure ends the stream with the
    internal error as its last event, after the events already rendered (``stream_boundary``)."""
    writer = _Writer(send)
    try:
        await send({"type": "http.response.start", "status": 200, "headers": RAW_STREAM_HEADERS})
        ended = False
        with stream_boundary() as outcome:
            ended = await _pump(writer, reply, wait=False)
        if not (ended or outcome.failed):
            finished = False
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch, receive, writer, keepalive, nursery.cancel_scope)
                with stream_boundary() as outcome:
                    await _pump(writer, reply, wait=True)
                finished = True
                nursery.cancel_scope.cancel()  # the watcher
            if not finished:  # the client is gone
                return
        if outcome.failed:
            writer.add(reply.failure_event())
        await writer.finish()
    finally:
        reply.stream.close()


class _Writer:
    """Sends body chunks of one stream and remembers when it last did (for the keepalive).

    Frames are gathered with :meth:`add` and sent together by :meth:`flush`: a burst costs one
    send, and frames rendered before a failure are still sent, ahead of its error event.
    """

    def __init__(self, send: Send) -> None:
        self._send = send
        self._pending = bytearray()
        self._now = trio.lowlevel.current_clock().current_time  # one call, not trio's three
        self.last_sent = self._now()

    def add(self, frame: bytes) -> None:
        self._pending += frame

    async def flush(self) -> None:
        chunk = bytes(self._pending)
        self._pending.clear()
        await self.write(chunk)

    async def finish(self) -> None:
        """Send what is pending with the end of the body, in one message."""
        body = bytes(self._pending)
        self._pending.clear()
        await self._send({"type": "http.response.body", "body": body, "more_body": False})

    async def write(self, chunk: bytes) -> None:
        self.last_sent = self._now()
        await self._send({"type": "http.response.body", "body": chunk, "more_body": True})


async def _pump(writer: _Writer, reply: StreamReply, *, wait: bool) -> bool:
    """Send events as they come, what is already queued in one body chunk (up to ``BURST``
    events), so a burst costs one send, not one per event.  True once the stream has ended:
    its last frames are left in ``writer``, to go out with the end of the body.  Without
    ``wait``, False once it would have to wait for an event, everything taken sent."""
    stream = reply.stream
    try:
        while True:
            # (receive returns at once with an event already queued)
            entry = await stream.receive() if wait else stream.receive_nowait()
            if entry is None:
                return False
            writer.add(_frame(reply, entry))
            for _more in range(BURST - 1):
                if (queued := stream.receive_nowait()) is None:
                    break
                writer.add(_frame(reply, queued))
            await writer.flush()
    except (trio.EndOfChannel, SubscriberOverflow):
        return True


def _frame(reply: StreamReply, entry: LogEntry) -> bytes:
    result = entry.encoded(reply.method.encode_event_bytes)
    return encode_event(reply.head + result + rpc.SUCCESS_TAIL, event_id=entry.seq)


async def _watch(
    receive: Receive, writer: _Writer, keepalive: float, stream_scope: trio.CancelScope
) -> None:
    """Cancel ``stream_scope`` when the client disconnects; while waiting for that, send a
    keepalive comment whenever nothing was sent for ``keepalive`` seconds."""
    while True:
        with trio.move_on_at(writer.last_sent + keepalive):
            if (await receive())["type"] == "http.disconnect":
                stream_scope.cancel()
                return
            continue
        if trio.current_time() >= writer.last_sent + keepalive:
            await writer.write(KEEPALIVE)
