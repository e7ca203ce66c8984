"""An echo agent built with the official ``a2a-sdk``: the interop peer for client tests.

Run as a script: binds 127.0.0.1 on a free port, prints ``PORT <n>`` and serves until killed.
JSON-RPC is mounted at ``/`` (v1.0 and v0.3 compat), HTTP+JSON at ``/rest``.  The card is at
the well-known path (``max-age=60``) and under ``/revalidate/`` (``no-cache``); a v0.3 card
(pointing at the same JSON-RPC endpoint) is at ``/v03/.well-known/agent.json``.

The agent echoes the text it gets as a two-chunk artifact.  Text starting with ``slow`` makes
it pause between events; ``wait`` makes it work until cancelled; ``hello`` answers with a
plain message instead of a task; ``fail internal`` raises the SDK's ``InternalError``.
"""

from __future__ import annotations

import asyncio
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
    TaskState,
)
from a2a.utils.errors import InternalError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input()
        if text == "hello":
            await event_queue.enqueue_event(new_text_message("hello back", role=Role.ROLE_AGENT))
            return
        if text == "fail internal":
            raise InternalError(message="database unavailable")
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        delay = 0.3 if text.startswith("slow") else 0.0
        await updater.start_work(updater.new_agent_message([new_text_part("echoing")]))
        if text == "wait":
            await asyncio.sleep(3600)
        half = len(text) // 2
        await asyncio.sleep(delay)
        await updater.add_artifact([new_text_part(text[:half])], artifact_id="echo", name="echo")
        await asyncio.sleep(delay)
        await updater.add_artifact(
            [new_text_part(text[half:])], artifact_id="echo", append=True, last_chunk=True
        )
        await asyncio.sleep(delay)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.update_status(TaskState.TASK_STATE_CANCELED)


def build_app(base: str) -> Starlette:
    card = AgentCard(
        name="SDK echo",
        description="Echoes text back",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base + "/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(
                url=base + "/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text", tags=["echo"])],
    )
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.name = "SDK echo (extended)"
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=InMemoryPushNotificationConfigStore(),
        extended_agent_card=extended,
    )
    v03_card = {
        "name": "SDK echo (v0.3 card)",
        "description": "Echoes text back",
        "url": base + "/",
        "version": "1.0.0",
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes", "tags": ["echo"]}],
    }

    async def legacy_card(request: Request) -> JSONResponse:
        return JSONResponse(v03_card)

    routes = [
        Route("/v03/.well-known/agent.json", legacy_card),
        *create_agent_card_routes(card, cache_control="max-age=60"),
        *create_agent_card_routes(
            card, card_url="/revalidate/.well-known/agent-card.json", cache_control="no-cache"
        ),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    return Starlette(routes=routes)


def main() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    app = build_app(f"http://127.0.0.1:{port}")
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    print(f"PORT {port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
