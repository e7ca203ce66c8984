"""The benchmark agent written with the official ``a2a-sdk``, served by uvicorn.

Same behaviour as the a2a_trio side (see ``behaviour.py``): an ``AgentExecutor`` behind the
SDK's ``DefaultRequestHandler`` and its Starlette JSON-RPC routes, on uvicorn's defaults
(asyncio loop, h11 parser: uvloop and httptools are not installed).
"""

from __future__ import annotations

import asyncio
import logging
import socket

import uvicorn
from a2a.helpers.proto_helpers import get_message_text, new_task, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    TaskState,
)
from behaviour import (
    behaviour_of,
    emit_text,
    raise_fd_limit,
    released,
    server_args,
    write_port,
)
from google.protobuf.json_format import MessageToDict
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette


class BenchExecutor(AgentExecutor):
    """Echo, hold and fan-out, as described in ``behaviour.py``."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        assert message is not None
        task_id = context.task_id or ""
        context_id = context.context_id or ""
        todo = behaviour_of(MessageToDict(message.metadata) if message.metadata else None)
        await event_queue.enqueue_event(
            new_task(task_id, context_id, TaskState.TASK_STATE_SUBMITTED, history=[message])
        )
        updater = TaskUpdater(event_queue, task_id, context_id)
        if todo.kind in ("hold", "fanout"):
            await updater.start_work()
            for _poll in range(todo.max_polls):
                if released(todo.file):
                    break
                await asyncio.sleep(todo.poll)
            for _ in range(todo.events):
                await updater.add_artifact([new_text_part(emit_text())])
                await asyncio.sleep(todo.interval)
            await updater.add_artifact([new_text_part("done")])
        else:
            await updater.add_artifact([new_text_part(get_message_text(message))])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.cancel()


def build_app(port: int) -> Starlette:
    """The SDK's Starlette app: agent card plus JSON-RPC at ``/``."""
    card = AgentCard(
        name="bench",
        description="Benchmark agent (echo, hold, fan-out)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echo", tags=["bench"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=BenchExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


def main() -> None:
    args = server_args(__doc__ or "")
    raise_fd_limit()
    logging.basicConfig(level=logging.WARNING)
    EventSourceResponse.DEFAULT_PING_INTERVAL = args.keepalive
    # IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose listening
    # socket says so, and without it every keep-alive response waits on a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(port), log_level="warning", access_log=False, backlog=4096, lifespan="off"
    )
    server = uvicorn.Server(config)
    write_port(args.port_file, port)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
