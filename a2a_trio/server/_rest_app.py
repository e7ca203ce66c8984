"""The HTTP+JSON/REST routes: one catch-all route that resolves A2A resources itself.

Resolution (paths, verbs, tenants, query typing, error bodies) is in the sans-IO ``_rest``
module; this layer reads the request, runs the v1.0 method the route names through the shared
handler, and writes JSON or an event stream.  More specific routes (JSON-RPC, agent cards,
legacy surfaces) are matched by the router before this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quart import Response, request
from quart_trio import QuartTrio

from ..errors import (
    A2AError,
    AuthenticationRequiredError,
    ContentTypeNotSupportedError,
    VersionNotSupportedError,
)
from ..runtime import LogEntry
from ..wire import dumps, loads
from ._body import BodyTooLarge, read_body
from ._jsonrpc_endpoint import JSON_TYPES, last_event_id
from ._rest import BodyTooLargeError, VerbNotAllowed, match_route, problem, rest_params
from ._rpc_methods import V1_METHODS, CallInfo, StreamingMethod
from ._sse import encode_event
from ._streaming import event_stream_response
from ._tenants import authenticated_owner, caller_scope
from ._versions import V0_3, VERSION_HEADERS, requested_version

if TYPE_CHECKING:
    from ._app import A2AServer

VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def mount_rest(app: QuartTrio, server: A2AServer) -> None:
    """Serve the HTTP+JSON binding at the root paths (and under ``/{tenant}``)."""

    @app.route("/<path:resource>", methods=VERBS)
    async def rest(resource: str) -> Response:
        try:
            return await _rest(server)
        except A2AError as error:
            return _problem(error)


def _check_version(headers: Any) -> None:
    """REST paths are v1.0's; no header is served as 1.0 (the path says which), an explicit
    0.3 is refused (v0.3 clients use JSON-RPC), as is any unsupported version."""
    version = requested_version(headers)
    if version == V0_3 and any(headers.get(name, "").strip() for name in VERSION_HEADERS):
        raise VersionNotSupportedError(
            "A2A 0.3 is served over JSON-RPC only (POST the v0.3 method to the JSON-RPC URL); "
            "HTTP+JSON here speaks 1.0 (send A2A-Version: 1.0)"
        )


async def _json_body(server: A2AServer) -> Any:
    try:
        body = await read_body(request, server.config.max_body_bytes)
    except BodyTooLarge:
        raise BodyTooLargeError(
            f"Request body larger than {server.config.max_body_bytes} bytes"
        ) from None
    if not body.strip():
        return None
    if request.mimetype not in JSON_TYPES:
        raise ContentTypeNotSupportedError(
            f"Content-Type must be application/json or application/a2a+json, not "
            f"{request.mimetype[:60] or 'missing'!r}"
        )
    return loads(body)


async def _rest(server: A2AServer) -> Response:
    headers = {name.lower(): value for name, value in request.headers.items()}
    owner = await authenticated_owner(server.config, headers)
    _check_version(request.headers)
    call = match_route(request.method if request.method != "HEAD" else "GET", request.path)
    body = await _json_body(server) if request.method in ("POST", "PUT", "PATCH") else None
    params = rest_params(call, body, request.args.items(multi=True))
    method = V1_METHODS[call.route.method]
    decoded = method.decode(params)
    scope = caller_scope(server.config, getattr(decoded, "tenant", ""), owner)
    info = CallInfo(last_event_id=last_event_id(request.headers.get("Last-Event-ID")))
    if isinstance(method, StreamingMethod):
        stream = await method.call(server.handler, scope, decoded, info)

        def render(entry: LogEntry) -> list[bytes]:
            return [encode_event(dumps(method.encode_event(entry.event)), event_id=entry.seq)]

        return event_stream_response(stream, render, server.config.keepalive)
    result = method.encode(await method.call(server.handler, scope, decoded, info))
    return Response(dumps(result), content_type="application/json")


def _problem(error: A2AError) -> Response:
    headers = {"Allow": ", ".join(error.allow)} if isinstance(error, VerbNotAllowed) else {}
    if isinstance(error, AuthenticationRequiredError):
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        dumps(problem(error)),
        status=error.http_status,
        content_type="application/json",
        headers=headers,
    )
