"""The ``a2a-trio`` client commands pointed at things that are not working agents.

Each case is a real server on 127.0.0.1 answering the way a misconfigured or foreign one does;
the command must exit 2 with one line saying what is wrong and, where there is one, what to do.
"""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable

import pytest
import trio
from client.stub_agent import Reply, Request, http_answer, open_stub_agent, rpc_error, rpc_result

from a2a_trio import model as m
from a2a_trio.wire import V1

from .test_cli import ENV, SCRIPT, in_process

HTML_PAGE = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"
CARD = "/.well-known/agent-card.json"


async def html_404(request: Request, reply: Reply) -> None:
    await reply.send(404, HTML_PAGE, "text/html")


async def html_200(request: Request, reply: Reply) -> None:
    await reply.send(200, HTML_PAGE, "text/html")


async def json_not_a_card(request: Request, reply: Reply) -> None:
    await reply.json({"status": "ok", "version": "3.2"})


async def forbidden(request: Request, reply: Reply) -> None:
    await reply.send(403, HTML_PAGE, "text/html")


async def silent(request: Request, reply: Reply) -> None:
    await trio.sleep_forever()


async def trickle(request: Request, reply: Reply) -> None:
    """A whole answer, one byte every 50 ms: no read waits long, the answer takes seconds."""
    task = V1.encode(m.Task("t1", m.TaskStatus(m.TaskState.COMPLETED), context_id="c1"))
    await reply.dribble(http_answer(200, reply.json_body(rpc_result(task))), gap=0.05)


async def hang_up(request: Request, reply: Reply) -> None:
    """Close the connection without answering."""


async def cut_short(request: Request, reply: Reply) -> None:
    await reply.stream.send_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"
    )


async def unsupported(request: Request, reply: Reply) -> None:
    await reply.json(rpc_error(-32004, "This operation is not supported"))


async def v03_only(request: Request, reply: Reply) -> None:
    """A v0.3 agent behind a v1.0 card: the v1.0 method names are unknown to it."""
    await reply.json(rpc_error(-32601, f"Method not found: {request.json()['method']}"))


async def unauthorized(request: Request, reply: Reply) -> None:
    await reply.send(401, b"")


TIMEOUT_HINT = " (to wait longer, pass --timeout SECONDS)"
CHECK = "check the credentials given with --token, $A2A_TOKEN or --header"

# (handler, whether the stub serves a card, the command's arguments after the URL, the error)
CASES: list[tuple[Callable[[Request, Reply], Awaitable[None]], bool, list[str], str]] = [
    (html_404, False, ["card"], "no agent card found (tried {url}" + CARD),
    (html_200, False, ["send", "hi"], "the agent card at {url}" + CARD + " is not JSON"),
    (json_not_a_card, False, ["get", "t1"], "invalid agent card at {url}" + CARD + ": $.name:"),
    (html_404, True, ["get", "t1"], "HTTP 404 from the agent at {url}/rpc: an HTML page, not"),
    (forbidden, True, ["cancel", "t1"], "HTTP 403 from the agent at {url}/rpc: an HTML page"),
    (
        forbidden,
        True,
        ["get", "t1"],
        " (access denied: pass credentials with --token or --header)\n",
    ),
    (forbidden, False, ["card", "--token", "x"], f"{CARD} (access denied: {CHECK})\n"),
    (unauthorized, True, ["get", "t1", "-H", "X-Key: 1"], f"Authentication required ({CHECK})\n"),
    (silent, False, ["card", "--timeout", "0.5"], "timed out waiting for the answer"),
    (silent, True, ["send", "hi", "--timeout", "0.5"], "/rpc: timed out waiting for the answer"),
    (silent, True, ["stream", "hi", "--timeout", "0.5"], TIMEOUT_HINT + "\n"),
    (
        trickle,
        True,
        ["get", "t1", "--timeout", "0.5"],
        "/rpc: timed out waiting for the answer (to",
    ),
    (hang_up, False, ["card"], CARD + ": Server disconnected without sending a response.\n"),
    (cut_short, True, ["get", "t1"], "/rpc: peer closed connection without sending complete"),
    (unsupported, True, ["cancel", "t1"], "UnsupportedOperationError (-32004): This operation"),
    (
        v03_only,
        True,
        ["get", "t1"],
        "MethodNotFoundError (-32601): Method not found: GetTask (its card offers A2A 1.0 over"
        " JSONRPC at {url}/rpc, but the agent there does not know this method: it may not offer"
        " it, or the card names another protocol version or URL than the agent serves)\n",
    ),
]


async def run_cli(args: list[str], url: str) -> subprocess.CompletedProcess[bytes]:
    """``a2a-trio COMMAND URL REST...`` in a subprocess, its output captured."""
    command, *rest = args
    return await trio.run_process(
        [SCRIPT, command, url, *rest],
        capture_stdout=True,
        capture_stderr=True,
        env=ENV,
        check=False,
    )


@pytest.mark.parametrize(("handler", "serves_card", "args", "error"), CASES)
async def test_a_wrong_target_is_one_line_saying_why(
    handler: Callable[[Request, Reply], Awaitable[None]],
    serves_card: bool,
    args: list[str],
    error: str,
) -> None:
    async with open_stub_agent(handler, serves_card=serves_card) as server:
        result = await run_cli(args, server.url)
    stderr = result.stderr.decode()
    assert (result.returncode, result.stdout) == (2, b""), stderr
    assert stderr.startswith("error: ")
    assert stderr.count("\n") == 1
    assert error.format(url=server.url) in stderr
    assert "<html" not in stderr


async def none_under_v1_and_a_silent_origin(request: Request, reply: Reply) -> None:
    if request.path.startswith("/v1/"):
        await reply.send(404, HTML_PAGE, "text/html")
        return
    await trio.sleep_forever()


async def test_a_discovery_cut_at_the_origin_is_a_timeout_with_the_remedy() -> None:
    """No card under the URL's path, and the look at the origin's card (for a "give that URL"
    hint) is never answered: the command said "no agent card found", as if more time would
    not have told; it says the discovery timed out, and how to wait longer."""
    async with open_stub_agent(none_under_v1_and_a_silent_origin, serves_card=False) as server:
        result = await run_cli(["card", "--timeout", "0.5"], server.url + "/v1")
    stderr = result.stderr.decode()
    assert (result.returncode, result.stdout) == (2, b""), stderr
    tried = f"{server.url}/v1{CARD}, {server.url}/v1/.well-known/agent.json"
    assert stderr == (
        f"error: fetching the agent card at {server.url}{CARD} (the origin's, as there is none"
        f" at {tried}): timed out waiting for the answer{TIMEOUT_HINT}\n"
    )


def test_a_host_name_that_does_not_resolve_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = in_process(capsys, "get", "http://no-such-agent.invalid", "t1")
    assert (code, out) == (2, "")
    assert err.startswith(
        "error: fetching the agent card at http://no-such-agent.invalid/.well-known/"
        "agent-card.json: the host name does not resolve ("
    )
