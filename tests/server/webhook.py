"""A webhook receiver for the push-notification tests: a real hypercorn server on 127.0.0.1
that keeps every POST it gets and answers with the statuses a test sets."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import attrs
import orjson
import trio
import trustme
from hypercorn.config import Config
from hypercorn.trio import serve

from a2a_trio.server._jsonrpc_endpoint import read_body


@attrs.frozen
class Delivery:
    """One POST as received."""

    path: str
    headers: dict[str, str]
    body: Any
    client: tuple[str, int] | None = None
    """The sender's end of the connection it came over."""

    @property
    def kind(self) -> str:
        """The StreamResponse arm it carries (``task``, ``statusUpdate``, ...)."""
        (key,) = self.body
        return str(key)

    @property
    def state(self) -> str | None:
        if self.kind == "statusUpdate":
            return str(self.body["statusUpdate"]["status"]["state"])
        if self.kind == "task":
            return str(self.body["task"]["status"]["state"])
        return None


@attrs.define
class Webhook:
    """The receiver: ``url`` to give in configs; ``answers`` the statuses of the next POSTs
    (then 200)."""

    url: str = ""
    received: list[Delivery] = attrs.field(factory=list)
    answers: list[int] = attrs.field(factory=list)
    answer_body: bytes = b""
    attempts: int = 0
    _arrived: trio.lowlevel.ParkingLot = attrs.field(factory=trio.lowlevel.ParkingLot)

    async def wait_for(self, done: Callable[[list[Delivery]], bool]) -> list[Delivery]:
        """The deliveries once ``done`` says they are complete (fails after 10 s); looked at
        after each POST, refused ones too."""
        with trio.fail_after(10):
            while not done(self.received):
                await self._arrived.park()
        return self.received

    async def wait_for_state(self, state: str, *, path: str = "/hook") -> list[Delivery]:
        """The deliveries to ``path`` once one of them carries ``state``."""
        return await self.wait_for(lambda got: any(d.state == state for d in got if d.path == path))

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        body = await read_body(receive, {}, limit=1024 * 1024)
        self.attempts += 1
        status = self.answers.pop(0) if self.answers else 200
        if status < 300:
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            client = scope.get("client")
            delivery = Delivery(scope["path"], headers, orjson.loads(body), client=client)
            self.received.append(delivery)
        self._arrived.unpark_all()
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": self.answer_body})


@asynccontextmanager
async def webhook_server(
    tls: trustme.LeafCert | None = None, *, host: str = "127.0.0.1"
) -> AsyncIterator[Webhook]:
    """A :class:`Webhook` served on a free port of 127.0.0.1 for the block's lifetime; over
    HTTPS with ``tls``'s certificate, its URL naming ``host``."""
    hook = Webhook()
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = None
    with tempfile.TemporaryDirectory() as keys:
        if tls is not None:
            config.certfile = config.keyfile = os.path.join(keys, "webhook.pem")
            tls.private_key_and_cert_chain_pem.write_to_path(config.certfile)
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(serve, hook.app, config)
            hook.url = binds[0].replace("127.0.0.1", host, 1) + "/hook"
            yield hook
            nursery.cancel_scope.cancel()
