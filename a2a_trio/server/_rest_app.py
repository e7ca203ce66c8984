"""The HTTP+JSON/REST routes: one catch-all route that resolves A2A resources itself.

Resolution (paths, verbs, tenants, query typing, error bodies) is in the sans-IO ``_rest``
module (v0.3's route table in ``_rest_v03``); this layer reads the request, runs the method the
route names (v1.0, or v0.3 under ``/v1/``) through the shared handler, and writes JSON or an
event stream.  More specific routes (JSON-RPC, agent cards, legacy surfaces) are matched by the
router before this one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from quart import Response, request
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from ..errors import (
    A2AError,
    AuthenticationRequiredError,
    ContentTypeNotSupportedError,
    FieldError,
    InternalError,
)
from ..runtime import LogEntry
from ..wire import dumps, loads
from ._body import body_deadline, read_body
from ._handler import UNEXPECTED_FAILURE
from ._jsonrpc_endpoint import JSON_TYPES, last_event_id, wrong_content_type
from ._rest import (
    V03_PREFIX,
    V1_REST,
    VerbNotAllowed,
    as_sent,
    match_route,
    problem,
    rest_params,
    rest_version,
)
from ._rest_v03 import V03_REST, V03_REST_METHODS, v03_as_sent, v03_problem
from ._rpc_methods import V1_METHODS, CallInfo, Method, StreamingMethod
from ._sse import encode_event
from ._streaming import event_stream_response
from ._tenants import authenticated_owner, caller_scope, request_headers
from ._versions import V0_3, V1_0, version_from_query

if TYPE_CHECKING:
    from ._app import A2AServer

VERBS = ("GET", "POST", "PUT", "PATCH", "DELETE")
type View = Callable[..., Awaitable[Response]]
BINDINGS = {V1_0: (V1_REST, V1_METHODS), V0_3: (V03_REST, V03_REST_METHODS)}


def mount_rest(app: QuartTrio, server: A2AServer) -> None:
    """Serve the HTTP+JSON binding at the root paths (and under ``/{tenant}``), and answer
    what no route takes in JSON."""

    # OPTIONS is not served (no CORS): Quart's automatic answer would allow every verb.
    @app.route("/<path:resource>", methods=VERBS, provide_automatic_options=False)
    async def rest(resource: str) -> Response:
        try:
            return await _rest(server)
        except A2AError as error:
            return problem_response(error, request.path)

    @app.errorhandler(NotFound)
    @app.errorhandler(MethodNotAllowed)
    async def unrouted(_error: HTTPException) -> Response:
        """No route takes this verb and path (``/``, or a verb outside ``VERBS``): the view
        that owns the path (a legacy surface, else REST) refuses it in its own JSON shape, a
        wrong verb with its true ``Allow``, instead of Quart's HTML page."""
        adapter = app.create_url_adapter(request)
        try:  # matched as POST: the legacy surfaces and REST take it, and refuse other verbs
            rule, args = adapter.match(method="POST", return_rule=True) if adapter else (None, {})
        except HTTPException:
            rule, args = None, {}
        if rule is None or rule.endpoint is None:
            return await rest(request.path)
        view = cast(View, app.view_functions[rule.endpoint])  # ours: async, a Response
        return await view(**args)


async def _json_body(server: A2AServer) -> Any:
    config = server.config
    with body_deadline(config.body_timeout):
        body = await read_body(request, config.max_body_bytes)
    if not body.strip():
        return None
    if request.mimetype not in JSON_TYPES:
        raise ContentTypeNotSupportedError(wrong_content_type(request.mimetype))
    return loads(body)


async def _rest(server: A2AServer) -> Response:
    headers, query = version_from_query(
        request_headers(request.headers.items()), request.args.items(multi=True)
    )
    owner = await authenticated_owner(server.config, headers)
    version = rest_version(request.path, headers)
    binding, methods = BINDINGS[version]
    verb = request.method if request.method != "HEAD" else "GET"
    call = match_route(verb, request.path, binding)
    body = await _json_body(server) if request.method in ("POST", "PUT", "PATCH") else None
    params = rest_params(call, body, query)
    try:
        return await _serve(server, methods[call.route.method], params, owner)
    except A2AError as error:  # fields named as sent, whoever refused them (docs/bindings.md)
        if isinstance(error, FieldError):
            sent = {name for name, _value in query}
            error = v03_as_sent(error, params, sent) if version == V0_3 else as_sent(error, sent)
        raise error.spelled(binding.spell) from None


async def _serve(server: A2AServer, method: Method, params: dict[str, Any], owner: str) -> Response:
    """Run ``method`` on the ProtoJSON ``params`` of a REST request and write its answer."""
    decoded = method.decode(params)
    scope = caller_scope(server.config, getattr(decoded, "tenant", ""), owner)
    info = CallInfo(last_event_id=last_event_id(request.headers.get("Last-Event-ID")))
    if isinstance(method, StreamingMethod):
        stream = await method.call(server.handler, scope, decoded, info)

        def render(entry: LogEntry) -> list[bytes]:
            return [encode_event(dumps(method.encode_event(entry.event)), event_id=entry.seq)]

        failure = partial(problem_event, InternalError(UNEXPECTED_FAILURE), request.path)
        return event_stream_response(stream, render, server.config.keepalive, failure=failure)
    result = method.encode(await method.call(server.handler, scope, decoded, info))
    return Response(dumps(result), content_type="application/json")


def _problem_body(error: A2AError, path: str) -> bytes:
    """``error`` as the HTTP+JSON error body of the REST version ``path`` belongs to."""
    return dumps(v03_problem(error) if path.startswith(V03_PREFIX + "/") else problem(error))


def problem_response(error: A2AError, path: str) -> Response:
    """``error`` as the HTTP+JSON error of the REST version ``path`` belongs to."""
    headers = {"Allow": ", ".join(error.allow)} if isinstance(error, VerbNotAllowed) else {}
    if isinstance(error, AuthenticationRequiredError):
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        _problem_body(error, path),
        status=error.http_status,
        content_type="application/json",
        headers=headers,
    )


def problem_event(error: A2AError, path: str) -> bytes:
    """``error`` inside an event stream already answered 200: its HTTP+JSON error body as an
    ``event: error`` event, the form the official SDK's REST clients raise an error for (a bare
    ``data:`` event would be read as an empty StreamResponse)."""
    return encode_event(_problem_body(error, path), event="error")
