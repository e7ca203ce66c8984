"""``a2a-trio webhook``: a webhook that prints the push notifications it receives.

For trying push notifications from a terminal, and for seeing what an agent sends: every POST,
on any path, is read as an A2A v1.0 ``StreamResponse`` (what a2a_trio and the official SDKs
send), or as what A2A v0.3 agents send (the Task, or an event, with its ``kind``), printed as
one line (or as its JSON), and answered 204.  A body that is neither is answered 400, a
notification without the expected ``X-A2A-Notification-Token`` 401, each said on stderr.
"""

from __future__ import annotations

import sys
from typing import Any, Final

import attrs
import trio
import typer
from hypercorn.config import Config as HypercornConfig

from .. import model as m
from ..errors import InvalidParamsError, ParseError
from ..server._body import BodyTooLargeError
from ..server._jsonrpc_endpoint import ClientGone, read_body
from ..server._listen import listening
from ..server._tenants import request_headers
from ..server._worker import serve_on
from ..wire import V03, V1, dumps, loads
from ._view import parts_text

MAX_BODY: Final = 1024 * 1024
"""Bytes of one notification read at most: a task's whole state fits many times over."""

type Scope = dict[str, Any]
type Receive = Any
type Send = Any


def notification_line(event: m.StreamEvent) -> str:
    """One line saying what a notification tells: whose task, its state or artifact, the text
    (its line breaks and runs of spaces as one space: ``--json`` shows it as sent)."""
    match event:
        case (
            m.Task(id=task_id, status=status)
            | m.TaskStatusUpdateEvent(task_id=task_id, status=status)
        ):
            text = _one_line(status.message.parts) if status.message else ""
            return f"task {task_id} {status.state.name}" + (f"  {text}" if text else "")
        case m.TaskArtifactUpdateEvent(task_id=task_id, artifact=artifact):
            more = "" if event.last_chunk else " …"
            name = artifact.name or artifact.artifact_id
            return f"task {task_id} artifact {name}: {_one_line(artifact.parts)}{more}"
        case m.Message():
            return f"message: {_one_line(event.parts)}"
    raise TypeError(f"not a stream event: {event!r}")


def decode_notification(sent: Any) -> m.StreamEvent:
    """A notification's event: a v1.0 ``StreamResponse`` names its one field (``task``,
    ``statusUpdate``, ...), a v0.3 body is the Task (or event) itself, with its ``kind``."""
    if isinstance(sent, dict) and "kind" in sent:
        event, _final = V03.decode_stream_event(sent)
        return event
    return V1.decode_stream_response(sent)


def _one_line(parts: tuple[m.Part, ...]) -> str:
    return " ".join(parts_text(parts).split())


@attrs.frozen
class NotificationPrinter:
    """The ASGI app: ``token``, when set, must be each notification's token."""

    token: str | None
    json: bool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        status = await self._take(scope, receive)
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _take(self, scope: Scope, receive: Receive) -> int:
        """Read, check and print one request; its answer's status."""
        if scope["method"] != "POST":
            return 405
        headers = request_headers(
            (k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]
        )
        try:
            body = await read_body(receive, headers, MAX_BODY)
        except ClientGone:
            return 400  # (heard by nobody: the sender left before its notification was whole)
        except BodyTooLargeError:
            _refused(f"a notification of more than {MAX_BODY} bytes")
            return 413
        sent_token = headers.get("x-a2a-notification-token", "")
        if self.token is not None and sent_token != self.token:
            given = "a wrong" if sent_token else "no"
            _refused(f"a notification with {given} X-A2A-Notification-Token")
            return 401
        try:
            sent = loads(body)
            event = decode_notification(sent)
        except (ParseError, InvalidParamsError) as exc:
            _refused(
                "a body that is not an A2A notification (a v1.0 StreamResponse, or a v0.3"
                f" Task or event) ({exc.message})"
            )
            return 400
        typer.echo(dumps(sent).decode() if self.json else notification_line(event))
        sys.stdout.flush()
        return 204


def _refused(what: str) -> None:
    typer.echo(f"refused {what}", err=True)


async def receive_notifications(
    host: str,
    port: int,
    printer: NotificationPrinter,
    *,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``printer`` on ``host:port`` until cancelled; reports the bound base URL.

    Raises:
        ListenError: the address cannot be listened on (its message says what to change).
    """
    config = HypercornConfig()
    config.bind = [f"{host}:{port}"]
    config.accesslog = None
    config.loglevel = "WARNING"  # its "Running on" line would repeat the command's own
    with listening(host, port, backlog=config.backlog) as sockets:
        await serve_on(printer, config, sockets, task_status=task_status)
