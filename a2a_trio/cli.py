"""The ``a2a-trio`` command: serve an agent, or talk to any A2A agent from a shell.

Exit codes: 0 success, 1 usage or configuration error, 2 remote or runtime error, 3 the task
``send``, ``stream`` or ``subscribe`` showed ended failed, rejected or canceled.  Errors are one
line on stderr, never a traceback.  Each command runs its own ``trio.run``.
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Annotated, Any

import attrs
import httpx
import trio
import typer
from rich.console import Console, RenderableType
from rich.live import Live

from . import model as m
from ._cli import INTERRUPTED
from ._cli._help import PlainHelp
from ._cli._input import message_text
from ._cli._running import (
    TASK_DID_NOT_COMPLETE,
    RuntimeProblem,
    UsageProblem,
    first_error,
    parse_headers,
    run_command,
)
from ._cli._serving import host_problem, store_problem
from ._cli._view import TaskView, card_view, tasks_table
from ._one_server import DEFAULT_STORE
from .client import (
    HTTP_JSON,
    JSONRPC,
    BearerAuth,
    Client,
    ClientError,
    EventStream,
    Timeouts,
    TrustedOrigins,
    fetch_card,
    open_client,
)
from .errors import A2AError, MethodNotFoundError
from .wire import V1, dumps

app = typer.Typer(
    name="a2a-trio",
    help="Serve A2A agents on trio, or talk to any A2A agent.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help as click writes it: see PlainHelp
)

# --- options shared by the client commands ------------------------------------------------

MAX_PORT = 65535
UNSUCCESSFUL_ENDS = frozenset({m.TaskState.FAILED, m.TaskState.REJECTED, m.TaskState.CANCELED})


def _webhook_url(value: str | None) -> str | None:
    """``--webhook``: an http(s) URL the agent can POST to, checked as the agent's URL is."""
    return None if value is None else _agent_url(value)


def _agent_url(value: str) -> str:
    """The URL argument, refused before anything is sent unless it is an http(s) URL."""
    try:
        url = httpx.URL(value)
    except httpx.InvalidURL as exc:
        raise typer.BadParameter(f"{value!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https"):
        hint = f" (did you mean http://{value}?)" if value and "://" not in value else ""
        raise typer.BadParameter(f"{value!r} is not an http:// or https:// URL{hint}")
    if not url.host:
        raise typer.BadParameter(f"{value!r} names no host")
    if url.port is not None and not 0 < url.port <= MAX_PORT:
        raise typer.BadParameter(f"{value!r}: port {url.port} is not 1 to {MAX_PORT}")
    return value


Url = Annotated[
    str, typer.Argument(callback=_agent_url, help="The agent's base URL (or its card URL).")
]
Text = Annotated[
    str | None,
    typer.Argument(help="The message text (- reads it from stdin).", show_default=False),
]
TextFile = Annotated[
    str | None,
    typer.Option(metavar="PATH", help="Read the message text from this file (UTF-8)."),
]
TaskId = Annotated[str, typer.Argument(metavar="TASK_ID", help="The task id.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output.")]
Headers = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        metavar="'NAME: VALUE'",
        help="Extra header, e.g. 'X-Api-Key: k1' (repeatable).",
    ),
]
Token = Annotated[
    str | None,
    typer.Option("--token", envvar="A2A_TOKEN", help="Bearer token ($A2A_TOKEN)."),
]
Trust = Annotated[
    list[str] | None,
    typer.Option(
        "--trust-origin",
        metavar="ORIGIN",
        help="Another origin (https://host:port) the card may send you to with your credentials"
        " (repeatable).",
    ),
]


def _positive_seconds(seconds: float | None) -> float | None:
    """``--timeout``, refused before anything is sent unless it is a positive number."""
    if seconds is not None and not 0 < seconds < float("inf"):
        raise typer.BadParameter(f"{seconds} is not a positive number of seconds")
    return seconds


def _timeouts(seconds: float | None) -> Timeouts:
    """``--timeout``: one limit for connecting, each answer and each silence on a stream;
    without it, the client's defaults."""
    if seconds is None:
        return Timeouts()
    return Timeouts(connect=seconds, read=seconds, write=seconds, stream_read=seconds, card=seconds)


Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="SECONDS",
        callback=_positive_seconds,
        help="Give up after this many seconds without an answer (default: 10 to connect,"
        " 30 for the card, 300 for an answer; a stream waits for events as long as it"
        " stays connected).",
    ),
]


def _event_id(value: str | None) -> str | None:
    """``--after``: an SSE event id, which is not empty (that would mean no ``--after``) and
    holds no line break or NUL (it goes in a header)."""
    if value == "":
        raise typer.BadParameter(
            "'' is not an event id: give the id of the last event you saw (a2a_trio numbers"
            " a task's events 1, 2, ...), or leave --after out to start with the task as it is"
        )
    if value is not None and any(c in value for c in "\r\n\0"):
        raise typer.BadParameter(f"{value!r} is not an event id (it holds a line break or NUL)")
    return value


After = Annotated[
    str | None,
    typer.Option(
        "--after",
        metavar="EVENT_ID",
        callback=_event_id,
        help="Show only the events after this one (its SSE id; a2a_trio numbers a task's"
        " events 1, 2, ... from its first), as a dropped stream resumes.",
    ),
]


def _media_types(values: list[str] | None) -> list[str] | None:
    """``--accept`` values; an empty one is a usage error before anything is sent."""
    for value in values or ():
        if not value.strip():
            raise typer.BadParameter(f"{value!r} is not a media type (such as text/plain)")
    return values


Accept = Annotated[
    list[str] | None,
    typer.Option(
        "--accept",
        metavar="MEDIA_TYPE",
        callback=_media_types,
        help="A media type you accept in the answer, e.g. application/json (repeatable; sets"
        " acceptedOutputModes: the agent's skill may answer in a form it lists).",
    ),
]
Skill = Annotated[
    str,
    typer.Option(
        metavar="ID", help="Address this skill (sets metadata.skillId, as a2a_trio routes)."
    ),
]
NotificationToken = Annotated[
    str,
    typer.Option(
        metavar="TOKEN",
        help="The token push notifications carry (X-A2A-Notification-Token), so the webhook"
        " can tell them from other POSTs.",
    ),
]


def _bindings(values: list[str] | None) -> list[str] | None:
    """``--binding`` values, spelled canonically; a typo is a usage error before any request."""
    known = {name.upper(): name for name in (JSONRPC, HTTP_JSON)}
    for value in values or ():
        if value.upper() not in known:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(known.values())}")
    return [known[value.upper()] for value in values] if values else None


Binding = Annotated[
    list[str] | None,
    typer.Option(
        "--binding",
        metavar="JSONRPC|HTTP+JSON",
        callback=_bindings,
        help="Preferred binding: JSONRPC or HTTP+JSON (repeatable).",
    ),
]


def _trusted(origins: Sequence[str] | None) -> TrustedOrigins:
    """``--trust-origin`` values, parsed here, once, for the client: a bad one is a usage
    error before anything is sent."""
    try:
        return TrustedOrigins.parse(origins or ())
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--trust-origin'") from None


def _message(text: str, context_id: str, task_id: str, skill: str) -> m.Message:
    metadata: m.JsonObject | None = {"skillId": skill} if skill else None
    return m.text_message(text, context_id=context_id, task_id=task_id, metadata=metadata)


def _client_call(
    url: str,
    headers: Sequence[str] | None,
    token: str | None,
    bindings: Sequence[str] | None,
    trust: Sequence[str] | None,
    timeout: float | None,
    body: Callable[[Client], Awaitable[m.TaskState | None]],
) -> None:
    """Run ``body`` with a client for ``url``; exit 3 if the task it returns the state of ended
    without completing, so a script can tell a failed task from a delivered answer."""
    extra = parse_headers(headers)
    auth = BearerAuth(token) if token else None
    trusted_origins = _trusted(trust)
    timeouts = _timeouts(timeout)
    ended: m.TaskState | None = None

    async def main() -> None:
        nonlocal ended
        kwargs: dict[str, Any] = {"bindings": bindings} if bindings else {}
        async with open_client(
            url,
            auth=auth,
            headers=extra,
            trusted_origins=trusted_origins,
            timeouts=timeouts,
            **kwargs,
        ) as client:
            try:
                ended = await body(client)
            except* MethodNotFoundError as group:
                for error in group.exceptions:
                    error.add_note(_unknown_method_note(client.interface))
                raise

    run_command(main, credentials=bool(auth or extra))
    if ended in UNSUCCESSFUL_ENDS:
        raise typer.Exit(TASK_DID_NOT_COMPLETE)


def _unknown_method_note(interface: m.AgentInterface) -> str:
    """Why an agent may not know a standard A2A method: its card names the wrong interface."""
    return (
        f"(its card offers A2A {interface.protocol_version} over {interface.protocol_binding}"
        f" at {interface.url}, but the agent there does not know this method: it may not offer"
        " it, or the card names another protocol version or URL than the agent serves)"
    )


def _print_json(value: Any) -> None:
    sys.stdout.write(dumps(value).decode() + "\n")
    sys.stdout.flush()


async def _follow(events: EventStream, *, json: bool, url: str) -> m.TaskState | None:
    """Print a stream (see :func:`_print_events`); return the task's last state seen.

    When the stream breaks off (an error, Ctrl-C) before the task it showed has ended, say the
    command that follows the task on from the last event shown, so nothing is shown twice.
    """
    view = TaskView()
    try:
        return await _print_events(events, view, json=json)
    except* KeyboardInterrupt:
        if hint := _follow_on(url, view, events.last_event_id):
            typer.echo(f"to follow the task on: {hint}", err=True)
        raise
    except* (A2AError, ClientError) as group:
        if hint := _follow_on(url, view, events.last_event_id):
            first_error(group).add_note(f"(to follow the task on: {hint})")
        raise


def _follow_on(url: str, view: TaskView, last_event_id: str) -> str:
    """The ``subscribe`` command that goes on where a broken-off stream of ``view``'s task
    stopped, or ``""`` when there is nothing to follow: no task seen, or it ended or waits."""
    if not view.task_id or view.state in m.TERMINAL_STATES | m.INTERRUPTED_STATES:
        return ""
    after = ["--after", last_event_id] if last_event_id else []
    return shlex.join(["a2a-trio", "subscribe", url, view.task_id, *after])


FIND_SENT_TASK_SECONDS = 5.0
"""How long a ``send`` stopped by Ctrl-C looks for the task it started (one ListTasks call); a
second Ctrl-C stops it at once."""


async def _left_at_the_agent(client: Client, url: str, message: m.Message) -> str:
    """What to do about the task a blocking ``send`` stopped by Ctrl-C leaves at the agent: the
    commands that show and cancel it, or, when its id is not known, the one that finds it.

    A blocking answer names its task only once the task ends, so unless the message continued
    a task, its id is looked for among the agent's newest tasks (of the message's context, when
    the command named one): the one whose history holds the message, by the id the command
    gave it.  The message itself is sent as for any blocking send.
    """
    task_id = message.task_id or await _task_of(client, message)
    if task_id:
        get, cancel = (shlex.join(["a2a-trio", verb, url, task_id]) for verb in ("get", "cancel"))
        return f"task {task_id} goes on at the agent\nto see it: {get}\nto stop it: {cancel}"
    in_context = ["--context-id", message.context_id] if message.context_id else []
    listing = shlex.join(["a2a-trio", "list", url, *in_context])
    return (
        f"the agent had not said which task message {message.message_id} started, if any\n"
        f"to find it (newest first): {listing}"
    )


async def _task_of(client: Client, message: m.Message) -> str:
    """The id of the task whose history holds ``message``, among the agent's newest 100 (of
    its context, if it names one); ``""`` when not found in time, or the agent lists none."""
    with trio.move_on_after(FIND_SENT_TASK_SECONDS):
        try:
            page = await client.list_tasks(context_id=message.context_id, page_size=100)
        except (A2AError, ClientError):  # an agent that lists no tasks (ListTasks came in v1.0)
            return ""
        for task in page.tasks:
            if any(sent.message_id == message.message_id for sent in task.history):
                return task.id
    return ""


async def _print_events(events: EventStream, view: TaskView, *, json: bool) -> m.TaskState | None:
    """Print a stream into ``view``: one JSON line per event, or a live view redrawn as events
    arrive.

    Not in a terminal, the view is printed once at the end (also when the stream fails), as
    ordinary output ending in a newline: rich's live display would leave the last line open.
    """
    async with events:
        if json:
            async for event in events:
                _print_json(V1.encode_stream_response(event))
                view.apply(event)
            return view.state
        console = Console()
        if console.is_terminal and not console.is_dumb_terminal:
            with Live(view.render(), console=console, auto_refresh=False) as live:
                async for event in events:
                    view.apply(event)
                    live.update(view.render(), refresh=True)
            return view.state
        try:
            async for event in events:
                view.apply(event)
        finally:
            if not view.is_empty():
                console.print(view.render())
        return view.state


def _print_unclipped(console: Console, renderable: RenderableType) -> None:
    """Print ``renderable`` at its natural width when the console is narrower.

    Rich would otherwise shrink columns to the console's width, cutting values (task ids) that
    must be printed whole; a terminal then wraps the long lines itself.
    """
    wide = console.options.update_width(10_000)
    natural = console.measure(renderable, options=wide).maximum
    if natural > console.width:
        console = Console(width=natural)
    console.print(renderable)


def _show_result(result: m.Task | m.Message, *, json: bool) -> m.TaskState | None:
    """Print a task or a reply; return the task's state (``None`` for a reply)."""
    if json:
        _print_json(V1.encode_send_result(result))
    else:
        view = TaskView()
        view.apply(result)
        Console().print(view.render())
    return result.status.state if isinstance(result, m.Task) else None


# --- commands ----------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"a2a-trio {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Serve A2A agents on trio, or talk to any A2A agent."""


@app.command(cls=PlainHelp)
def card(
    url: Url,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Show an agent's card."""
    extra = parse_headers(header)
    auth = BearerAuth(token) if token else None
    origins = _trusted(trust_origin)
    timeouts = _timeouts(timeout)

    async def main() -> None:
        async with httpx.AsyncClient() as http:
            found = await fetch_card(
                http, url, auth=auth, headers=extra, trusted_origins=origins, timeouts=timeouts
            )
        if json:
            _print_json(V1.encode(found))
        else:
            Console().print(card_view(found))

    run_command(main, credentials=bool(auth or extra))


@app.command(cls=PlainHelp, short_help="Send a message and print the answer.")
def send(
    url: Url,
    text: Text = None,
    text_file: TextFile = None,
    context_id: Annotated[str, typer.Option(metavar="ID", help="Continue this context.")] = "",
    task_id: Annotated[str, typer.Option(metavar="ID", help="Continue this task.")] = "",
    skill: Skill = "",
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Return as soon as the task exists.")
    ] = False,
    accept: Accept = None,
    webhook: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            callback=_webhook_url,
            help="Have the agent POST the task's updates to this URL (push notifications; see"
            " a2a-trio webhook).",
        ),
    ] = None,
    notification_token: NotificationToken = "",
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Send a message and print the answer (waits for the task to finish)."""
    content = message_text(text, text_file)
    if notification_token and webhook is None:
        raise UsageProblem("--notification-token goes with --webhook URL")
    push = None
    if webhook is not None:
        push = m.TaskPushNotificationConfig(url=webhook, token=notification_token)

    async def body(client: Client) -> m.TaskState | None:
        message = _message(content, context_id, task_id, skill)
        try:
            answer = await client.send(
                message,
                return_immediately=no_wait,
                accepted_output_modes=accept or (),
                push_config=push,
            )
        except* KeyboardInterrupt:
            typer.echo(await _left_at_the_agent(client, url, message), err=True)
            raise
        return _show_result(answer, json=json)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


@app.command(cls=PlainHelp, short_help="Send a message and show its progress live.")
def stream(
    url: Url,
    text: Text = None,
    text_file: TextFile = None,
    context_id: Annotated[str, typer.Option(metavar="ID", help="Continue this context.")] = "",
    task_id: Annotated[str, typer.Option(metavar="ID", help="Continue this task.")] = "",
    skill: Skill = "",
    accept: Accept = None,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Send a message and show status, progress and artifacts live as they arrive."""
    content = message_text(text, text_file)

    async def body(client: Client) -> m.TaskState | None:
        message = _message(content, context_id, task_id, skill)
        events = client.stream(message, accepted_output_modes=accept or ())
        return await _follow(events, json=json, url=url)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


@app.command(cls=PlainHelp, short_help="Follow a running task live.")
def subscribe(
    url: Url,
    task: TaskId,
    after: After = None,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Follow a running task live (or, with --after, what it sent after that event)."""

    async def body(client: Client) -> m.TaskState | None:
        return await _follow(client.subscribe(task, last_event_id=after or ""), json=json, url=url)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


@app.command(cls=PlainHelp)
def get(
    url: Url,
    task: TaskId,
    history: Annotated[
        int | None, typer.Option(min=0, metavar="N", help="At most this many history messages.")
    ] = None,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Show a task."""

    async def body(client: Client) -> None:
        _show_result(await client.get_task(task, history_length=history), json=json)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


def _state_name(value: str) -> str:
    """``--state``: a task state named as the docs name it (``input-required``), in capitals,
    or as on the wire (``TASK_STATE_WORKING``); its member name, refused in the words the
    server refuses an unknown state in."""
    name = value.upper().replace("-", "_").removeprefix("TASK_STATE_")
    if value and name not in m.TaskState.__members__:
        states = ", ".join(s.name.lower().replace("_", "-") for s in m.TaskState if s.value)
        raise typer.BadParameter(f"unknown task state {value!r} (one of {states})")
    return name


@app.command("list", cls=PlainHelp)
def list_(
    url: Url,
    context_id: Annotated[str, typer.Option(metavar="ID", help="Only tasks of this context.")] = "",
    state: Annotated[
        str,
        typer.Option(
            callback=_state_name, help="Only tasks in this state (e.g. working, completed)."
        ),
    ] = "",
    page_size: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Tasks per page.")
    ] = None,
    page_token: Annotated[
        str, typer.Option(metavar="TOKEN", help="Continue from this page token.")
    ] = "",
    all_pages: Annotated[bool, typer.Option("--all", help="Follow every page.")] = False,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """List tasks (one page, or all of them with --all)."""
    status = m.TaskState[state] if state else m.TaskState.UNSPECIFIED

    async def body(client: Client) -> None:
        if all_pages:
            tasks = [
                t
                async for t in client.iter_tasks(
                    context_id=context_id, status=status, page_size=page_size
                )
            ]
            page = m.ListTasksResponse(tasks=tasks, page_size=len(tasks), total_size=len(tasks))
        else:
            page = await client.list_tasks(
                context_id=context_id, status=status, page_size=page_size, page_token=page_token
            )
        if json:
            _print_json(V1.encode(page))
            return
        console = Console()
        width = console.width if console.is_terminal else None  # a pipe gets every value whole
        _print_unclipped(console, tasks_table(page.tasks, width=width))
        if page.next_page_token:
            console.print(f"next page: --page-token {page.next_page_token}", soft_wrap=True)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


@app.command(cls=PlainHelp)
def cancel(
    url: Url,
    task: TaskId,
    json: Json = False,
    header: Headers = None,
    token: Token = None,
    binding: Binding = None,
    trust_origin: Trust = None,
    timeout: Timeout = None,
) -> None:
    """Cancel a task and show it."""

    async def body(client: Client) -> None:
        _show_result(await client.cancel_task(task), json=json)

    _client_call(url, header, token, binding, trust_origin, timeout, body)


@app.command(cls=PlainHelp, short_help="Receive push notifications and print them.")
def webhook(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=MAX_PORT, help="Port to bind (0 picks a free one).")
    ] = 9000,
    notification_token: NotificationToken = "",
    json: Json = False,
) -> None:
    """Receive push notifications on any path and print one line per update, until Ctrl-C.

    Give its URL to an agent with send --webhook. An a2a_trio agent calls webhooks on its own
    machine or network only when served in the push mode private (see serve's help)."""
    from ._cli._webhook import NotificationPrinter, receive_notifications
    from .server._listen import ListenError, ListenTerms, listen_problem

    if problem := host_problem(host):
        raise UsageProblem(problem)
    printer = NotificationPrinter(notification_token or None, json)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            try:
                url = await nursery.start(partial(receive_notifications, host, port, printer))
            except* ListenError as group:
                options = ListenTerms("--port", "--port {}", "--host")
                problem = listen_problem(host, port, first_error(group), options)
                raise RuntimeProblem(problem) from None
            typer.echo(f"receiving push notifications at {url}/", err=True)

    run_command(main)


@app.command(cls=PlainHelp, short_help="Serve an agent until SIGINT or SIGTERM.")
def serve(
    agent: Annotated[str, typer.Argument(metavar="MODULE:ATTRIBUTE", help="The agent to serve.")],
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=MAX_PORT, help="Port to bind (0 picks a free one).")
    ] = 8000,
    store: Annotated[
        str,
        typer.Option(
            metavar="URL", help="Task store URL: sqlite:///path, postgresql://..., or memory."
        ),
    ] = DEFAULT_STORE,
    public_url: Annotated[
        str | None, typer.Option(metavar="URL", help="Base URL the agent card advertises.")
    ] = None,
    keepalive: Annotated[
        float,
        typer.Option(
            metavar="SECONDS", help="Seconds of stream silence before a keepalive comment."
        ),
    ] = 15.0,
    log_level: Annotated[
        str, typer.Option(metavar="LEVEL", help="debug, info, warning or error.")
    ] = "info",
    recovery_lease: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="With several replicas on one store: seconds after which a task no replica"
            " has written counts as left by a crashed one.",
        ),
    ] = None,
    follow_interval: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="Seconds between the looks at the store for a task that runs on another"
            " replica and has streams here (default 0.5).",
        ),
    ] = None,
    shutdown_grace: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help="Seconds running tasks get to finish after SIGINT/SIGTERM before they are"
            " recorded as failed (0: at once).",
        ),
    ] = 10.0,
    stall_warning: Annotated[
        float | None,
        typer.Option(
            metavar="SECONDS",
            help="Seconds the event loop may be held (a skill calling blocking code) before a"
            " warning names what held it (default 1; 0: never).",
        ),
    ] = None,
    push: Annotated[
        str,
        typer.Option(
            metavar="MODE",
            help="Push notifications to the webhooks clients register: off (the default), on"
            " (webhooks at public addresses), or private (loopback and private networks too).",
        ),
    ] = "off",
) -> None:
    """Serve an agent until SIGINT/SIGTERM (then drain running tasks gracefully; a second
    signal stops at once)."""
    from ._cli._signals import serve_until_signalled
    from ._one_server import served_store
    from .loading import ConfigError, StoreOpenError, check_store, load_agent, push_from
    from .runtime import RuntimeConfig
    from .server import ServerConfig, raise_open_file_limit, tune_gc_for_streams
    from .server import serve as serve_agent
    from .server._listen import ListenError, ListenTerms, listen_problem

    level = logging.getLevelName(log_level.upper())
    if not isinstance(level, int):
        raise UsageProblem(f"--log-level {log_level!r} is not one of debug, info, warning, error")
    if problem := host_problem(host):
        raise UsageProblem(problem)
    logger = logging.getLogger("a2a_trio")  # hypercorn logs through its own handlers
    logger.setLevel(level)
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    raise_open_file_limit()  # this command owns the process, as it owns its collector
    try:
        loaded = load_agent(agent)
        factory = served_store(store, alone=recovery_lease is None)
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from None
    try:
        push_settings = push_from(push)
    except ConfigError as exc:
        raise UsageProblem(f"--push {exc}") from None
    try:
        runtime = RuntimeConfig(recovery_lease=recovery_lease)
        if follow_interval is not None:
            runtime = attrs.evolve(runtime, follow_interval=follow_interval)
        if stall_warning is not None:
            runtime = attrs.evolve(runtime, stall_warning=stall_warning or None)
        config = ServerConfig(
            public_url=public_url,
            keepalive=keepalive,
            shutdown_grace=shutdown_grace,
            runtime=runtime,
            push=push_settings,
        )
    except ValueError as exc:  # a setting the configs' validators refuse
        raise UsageProblem(_in_option_terms(str(exc))) from None

    async def main() -> None:
        try:  # open the store once first, so a bad URL is one clear line, not a failed startup
            await check_store(factory)
        except ValueError as exc:
            raise UsageProblem(str(exc)) from None
        except StoreOpenError as exc:
            raise RuntimeProblem(store_problem(store, exc)) from None
        async with trio.open_nursery() as nursery:
            run = partial(serve_agent, loaded, host=host, port=port, store=factory, config=config)
            try:
                url = await nursery.start(
                    partial(serve_until_signalled, run, grace=config.shutdown_grace)
                )
            except* ListenError as group:
                options = ListenTerms("--port", "--port {}", "--host")
                problem = listen_problem(host, port, first_error(group), options)
                raise RuntimeProblem(problem) from None
            tune_gc_for_streams()
            typer.echo(f"serving {agent} at {url}")
            sys.stdout.flush()

    run_command(main)


# The serve options whose values the server's and runtime's configs check.
SETTING_OPTIONS = (
    "keepalive",
    "public_url",
    "recovery_lease",
    "follow_interval",
    "shutdown_grace",
    "stall_warning",
)


def _in_option_terms(message: str) -> str:
    """A config's refusal (``keepalive must be ...``) naming the option that set the value."""
    setting, _, rest = message.partition(" ")
    if setting in SETTING_OPTIONS:
        return f"--{setting.replace('_', '-')} {rest}"
    return message


# --- entry point -------------------------------------------------------------------------


def _text_hint(exc: typer.exceptions.TyperException, path: str) -> str:
    """A message text starting with '-' (``a2a-trio send URL -5``) reads as an unknown short
    option: say how to send it."""
    ctx = getattr(exc, "ctx", None)
    option = getattr(exc, "option_name", None) or ""
    takes_text = ctx is not None and any(p.name == "text" for p in ctx.command.params)
    if not takes_text or not option.startswith("-") or option.startswith("--"):
        return ""
    return f"for a text starting with '-', put -- before it: {path} URL -- '{option} ...'; "


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (usage errors give 1, not click's 2)."""
    command = typer.main.get_command(app)
    try:
        code = command.main(
            args=list(argv) if argv is not None else None,
            prog_name="a2a-trio",
            standalone_mode=False,
        )
    except UsageProblem as exc:
        typer.echo(f"error: {exc}", err=True)
        return 1
    except typer.exceptions.TyperException as exc:  # usage errors (missing argument, ...)
        ctx = getattr(exc, "ctx", None)
        path = ctx.command_path if ctx is not None else "a2a-trio"
        if message := exc.format_message():  # empty when help was shown for a bare command
            hint = _text_hint(exc, path)
            typer.echo(f"error: {message} ({hint}see '{path} --help')", err=True)
        return 1
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # Ctrl-C before the command's trio.run
            return INTERRUPTED
        typer.echo("aborted", err=True)
        return 1
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
