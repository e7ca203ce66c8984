"""How each operation travels on each protocol binding: request building and answer reading.

Sans-IO: a binding turns a typed request into an :class:`HttpCall` and turns the HTTP answer
(status and body) or one SSE ``data`` payload back into typed values or a typed error.  The
HTTP layer (``_http.py``) does the sending.  JSON-RPC (A2A v1.0 §9), HTTP+JSON (§11, paths
from the proto's ``google.api.http`` options) and v0.3 JSON-RPC (``message/send``, ...) are
implemented here.
"""

from __future__ import annotations

import abc
import enum
import itertools
from typing import Any, ClassVar, Final
from urllib.parse import quote

import attrs

from .. import model as m
from ..errors import A2AError, AuthenticationRequiredError, InvalidParamsError, ParseError
from ..wire import V03, V1, V03Codec, V1Codec, loads
from ._errors import InvalidResponseError, TransportError, error_reason, remote_error, rest_error

JSONRPC: Final = "JSONRPC"
HTTP_JSON: Final = "HTTP+JSON"


class Op(enum.StrEnum):
    """The A2A operations, named as the v1.0 JSON-RPC methods."""

    SEND = "SendMessage"
    STREAM = "SendStreamingMessage"
    GET = "GetTask"
    LIST = "ListTasks"
    CANCEL = "CancelTask"
    SUBSCRIBE = "SubscribeToTask"
    CREATE_PUSH = "CreateTaskPushNotificationConfig"
    GET_PUSH = "GetTaskPushNotificationConfig"
    LIST_PUSH = "ListTaskPushNotificationConfigs"
    DELETE_PUSH = "DeleteTaskPushNotificationConfig"
    EXTENDED_CARD = "GetExtendedAgentCard"


RESULT_TYPES: Final[dict[Op, type]] = {
    Op.GET: m.Task,
    Op.LIST: m.ListTasksResponse,
    Op.CANCEL: m.Task,
    Op.CREATE_PUSH: m.TaskPushNotificationConfig,
    Op.GET_PUSH: m.TaskPushNotificationConfig,
    Op.LIST_PUSH: m.ListTaskPushNotificationConfigsResponse,
    Op.EXTENDED_CARD: m.AgentCard,
}

# HTTP+JSON routes (a2a-v1.0.proto ``google.api.http``): verb and path template.  Path fields
# are the request's camelCase keys; other keys go in the body (POST) or the query (GET/DELETE).
REST_ROUTES: Final[dict[Op, tuple[str, str]]] = {
    Op.SEND: ("POST", "/message:send"),
    Op.STREAM: ("POST", "/message:stream"),
    Op.GET: ("GET", "/tasks/{id}"),
    Op.LIST: ("GET", "/tasks"),
    Op.CANCEL: ("POST", "/tasks/{id}:cancel"),
    Op.SUBSCRIBE: ("GET", "/tasks/{id}:subscribe"),
    Op.CREATE_PUSH: ("POST", "/tasks/{taskId}/pushNotificationConfigs"),
    Op.GET_PUSH: ("GET", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    Op.LIST_PUSH: ("GET", "/tasks/{taskId}/pushNotificationConfigs"),
    Op.DELETE_PUSH: ("DELETE", "/tasks/{taskId}/pushNotificationConfigs/{id}"),
    Op.EXTENDED_CARD: ("GET", "/extendedAgentCard"),
}


@attrs.frozen
class HttpCall:
    """One HTTP request to make: verb, absolute URL, JSON body and query parameters."""

    method: str
    url: str
    json: Any = None
    params: tuple[tuple[str, str], ...] = ()


def _bad_response(what: str, why: str = "") -> InvalidResponseError:
    detail = f": {why}" if why else ""
    return InvalidResponseError(f"invalid {what} from the agent{detail}")


def _json_body(body: bytes, what: str) -> Any:
    try:
        return loads(body)
    except ParseError as exc:
        raise _bad_response(what, f"not JSON ({exc.reason})") from None


def http_status_error(status: int, body: bytes, url: str) -> Exception:
    """An HTTP error status whose body carries no A2A error.

    A web page (a proxy's or a web server's error page) is named as such rather than quoted:
    its markup tells the reader nothing.
    """
    text = body[:200].decode("utf-8", errors="replace").strip()
    if text.startswith("<"):
        text = "an HTML page, not an A2A answer"
    if status == 401:
        return AuthenticationRequiredError(text or None)
    suffix = f": {text}" if text else ""
    return TransportError(f"HTTP {status} from the agent at {url}{suffix}", status_code=status)


class Binding(abc.ABC):
    """A protocol binding at one interface URL."""

    version: ClassVar[str]

    def __init__(self, url: str, *, tenant: str = "") -> None:
        self.url = url
        self.tenant = tenant

    def headers(self) -> dict[str, str]:
        """Headers every request on this binding carries."""
        return {"A2A-Version": self.version} if self.version != "0.3" else {}

    @abc.abstractmethod
    def call(self, op: Op, request: Any) -> HttpCall:
        """The HTTP request for ``op`` with the typed ``request``."""

    @abc.abstractmethod
    def result(self, op: Op, call: HttpCall, status: int, body: bytes) -> Any:
        """The typed result of the unary ``call``, or raise the error the answer carries."""

    @abc.abstractmethod
    def event(self, data: str) -> m.StreamEvent:
        """One SSE ``data`` payload as a typed event, or raise the error it carries."""

    @abc.abstractmethod
    def error(self, status: int, body: bytes) -> Exception:
        """The error a non-stream answer to a streaming call carries."""


def decode_result(codec: V1Codec | V03Codec, op: Op, data: Any, *, path: str) -> Any:
    """The result of ``op`` in ``codec``'s wire form; a bad shape raises InvalidResponseError."""
    try:
        if op in (Op.SEND, Op.STREAM):
            return codec.decode_send_result(data, path=path)
        if op is Op.DELETE_PUSH:
            return None
        return codec.decode(data, RESULT_TYPES[op], path=path)
    except InvalidParamsError as exc:
        raise _bad_response(f"{op} result", exc.message) from None


class JsonRpcBinding(Binding):
    """JSON-RPC 2.0 over HTTP POST; streams are SSE whose data are JSON-RPC responses."""

    version = "1.0"

    def __init__(self, url: str, *, tenant: str = "") -> None:
        super().__init__(url, tenant=tenant)
        self._ids = itertools.count(1)

    def method(self, op: Op) -> str:
        return op.value

    def params(self, op: Op, request: Any) -> Any:
        params = V1.encode(request)
        if self.tenant and "tenant" not in params:
            params["tenant"] = self.tenant
        return params

    def decode(self, op: Op, result: Any) -> Any:
        return decode_result(V1, op, result, path="$.result")

    def decode_event(self, result: Any) -> m.StreamEvent:
        try:
            return V1.decode_stream_response(result, path="$.result")
        except InvalidParamsError as exc:
            raise _bad_response("stream event", exc.message) from None

    def call(self, op: Op, request: Any) -> HttpCall:
        envelope = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": self.method(op),
            "params": self.params(op, request),
        }
        return HttpCall("POST", self.url, envelope)

    def _unwrap(self, body: Any, *, empty_ok: bool = False, request_id: Any = None) -> Any:
        """The ``result`` of a response, or raise its ``error``.

        ``empty_ok`` accepts a response with neither, for results that carry nothing (some
        v0.3 servers leave ``result`` out instead of sending ``null``).  A result must answer
        ``request_id`` when one is given.
        """
        if not isinstance(body, dict) or body.get("jsonrpc") != "2.0":
            raise _bad_response("JSON-RPC response")
        if "error" in body:
            error = body["error"]
            if not isinstance(error, dict) or not isinstance(error.get("code"), int):
                raise _bad_response("JSON-RPC error")
            message = error.get("message")
            data = error.get("data")
            raise remote_error(
                error["code"],
                message if isinstance(message, str) else "",
                data,
                reason=error_reason(data),
            )
        if "result" not in body and not empty_ok:
            raise _bad_response("JSON-RPC response")
        if request_id is not None and body.get("id") != request_id:
            raise _bad_response(
                f"JSON-RPC response (its id answers another request than {request_id})"
            )
        return body.get("result")

    def _envelope(
        self, status: int, body: bytes, *, empty_ok: bool = False, request_id: Any = None
    ) -> Any:
        try:
            parsed = loads(body)
        except ParseError:
            parsed = None
        if status >= 400 and not (isinstance(parsed, dict) and "error" in parsed):
            raise http_status_error(status, body, self.url)
        try:
            return self._unwrap(parsed, empty_ok=empty_ok, request_id=request_id)
        except A2AError as exc:
            if status == 401 and not isinstance(exc, AuthenticationRequiredError):
                # HTTP 401 decides: -32001 means "task not found" in v1.0 but "authentication
                # required" in older dialects, so the code alone cannot tell.
                raise AuthenticationRequiredError(exc.message, data=exc.data) from None
            raise

    def result(self, op: Op, call: HttpCall, status: int, body: bytes) -> Any:
        request_id = call.json["id"]
        result = self._envelope(status, body, empty_ok=op is Op.DELETE_PUSH, request_id=request_id)
        return self.decode(op, result)

    def event(self, data: str) -> m.StreamEvent:
        return self.decode_event(self._unwrap(_json_body(data.encode(), "stream event")))

    def error(self, status: int, body: bytes) -> Exception:
        try:
            self._envelope(status, body)
        except (A2AError, TransportError, InvalidResponseError) as exc:
            return exc
        return _bad_response("answer to a streaming call (not an event stream)")


class RestBinding(Binding):
    """HTTP+JSON: resource paths and verbs, ProtoJSON bodies, AIP-193 error objects."""

    version = "1.0"

    def call(self, op: Op, request: Any) -> HttpCall:
        verb, template = REST_ROUTES[op]
        fields = V1.encode(request)
        tenant = fields.pop("tenant", "") or self.tenant
        names = [part.split("}")[0] for part in template.split("{")[1:]]
        path = template.format(
            **{name: quote(str(fields.pop(name, "")), safe="") for name in names}
        )
        prefix = "/" + quote(tenant, safe="") if tenant else ""
        url = self.url.rstrip("/") + prefix + path
        if verb == "POST":
            return HttpCall(verb, url, fields)
        return HttpCall(verb, url, None, tuple(_query(fields)))

    def result(self, op: Op, call: HttpCall, status: int, body: bytes) -> Any:
        if status >= 300:
            raise self.error(status, body)
        if op is Op.DELETE_PUSH:
            return None
        return decode_result(V1, op, _json_body(body, f"{op} result"), path="$")

    def event(self, data: str) -> m.StreamEvent:
        parsed = _json_body(data.encode(), "stream event")
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            raise _aip193_error(parsed["error"], None)
        try:
            return V1.decode_stream_response(parsed)
        except InvalidParamsError as exc:
            raise _bad_response("stream event", exc.message) from None

    def error(self, status: int, body: bytes) -> Exception:
        try:
            parsed = loads(body)
        except ParseError:
            return http_status_error(status, body, self.url)
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(error, dict):
            return http_status_error(status, body, self.url)
        return _aip193_error(error, status)


def _aip193_error(error: dict[str, Any], http_status: int | None) -> A2AError:
    """An AIP-193 error object (``code``, ``status``, ``message``, ``details``) as its error.

    ``http_status`` is the answer's; an error inside a stream came with a 200, so there the
    object's own ``code`` stands for it (500 when it has none).
    """
    code = error.get("code")
    grpc_status = error.get("status")
    message = error.get("message")
    if http_status is None:
        http_status = code if isinstance(code, int) else 500
    return rest_error(
        http_status,
        grpc_status if isinstance(grpc_status, str) else "",
        message if isinstance(message, str) else "",
        error.get("details"),
    )


def _query(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """ProtoJSON scalars as query parameters (§11: booleans lowercase, repeated repeated)."""
    out: list[tuple[str, str]] = []
    for key, value in fields.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                raise TypeError(f"{key}: nested objects cannot go in a query string")
            out.append((key, str(item).lower() if isinstance(item, bool) else str(item)))
    return out


V03_METHODS: Final[dict[Op, str]] = {
    Op.SEND: "message/send",
    Op.STREAM: "message/stream",
    Op.GET: "tasks/get",
    Op.LIST: "tasks/list",
    Op.CANCEL: "tasks/cancel",
    Op.SUBSCRIBE: "tasks/resubscribe",
    Op.CREATE_PUSH: "tasks/pushNotificationConfig/set",
    Op.GET_PUSH: "tasks/pushNotificationConfig/get",
    Op.LIST_PUSH: "tasks/pushNotificationConfig/list",
    Op.DELETE_PUSH: "tasks/pushNotificationConfig/delete",
    Op.EXTENDED_CARD: "agent/getAuthenticatedExtendedCard",
}


class JsonRpcV03Binding(JsonRpcBinding):
    """A2A v0.3 JSON-RPC: slash-named methods and the v0.3 JSON shapes; no version header."""

    version = "0.3"

    def method(self, op: Op) -> str:
        return V03_METHODS[op]

    def params(self, op: Op, request: Any) -> Any:
        return V03.encode(request)

    def decode(self, op: Op, result: Any) -> Any:
        return decode_result(V03, op, result, path="$.result")

    def decode_event(self, result: Any) -> m.StreamEvent:
        try:
            event, _final = V03.decode_stream_event(result, path="$.result")
        except InvalidParamsError as exc:
            raise _bad_response("stream event", exc.message) from None
        return event
