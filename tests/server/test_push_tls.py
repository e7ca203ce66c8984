"""HTTPS webhooks, end to end: hypercorn serves the webhook over TLS with a certificate from a
test CA (trustme), and the server trusts that CA through ``SSL_CERT_FILE``, as an operator with
a private CA would; or does not, and says so."""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx
import pytest
import trio
import trustme

from a2a_trio import PushSettings, ServerConfig, TrustStoreError, serve
from a2a_trio import model as m
from a2a_trio._throttle import ThrottledLog
from a2a_trio.runtime import RuntimeConfig
from a2a_trio.server import _webhook_client
from a2a_trio.server._webhook_client import WebhookClient

from .agents import agent
from .conftest import V1_HEADERS
from .name_server import NameServer
from .test_push import start
from .webhook import webhook_server

RETRY_LATER = PushSettings(retry_wait=30, timeout=2, allow_private_networks=True)
"""A second try would come 30 s after the first: a test that sees the failure logged sooner
knows there was one try."""


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def ca_file(ca: trustme.CA, tmp_path: Path) -> str:
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


async def serving(nursery: trio.Nursery, push: PushSettings) -> str:
    """The base URL of a server pushing as ``push`` says, started now: after the test has set
    its ``SSL_CERT_FILE``, which the server reads as it starts."""
    config = ServerConfig(runtime=RuntimeConfig(poll_interval=0.01), push=push)
    url: str = await nursery.start(partial(serve, agent, port=0, config=config))
    return url


async def test_an_https_webhook_whose_private_ca_is_trusted_gets_every_event(
    nursery: trio.Nursery, ca: trustme.CA, ca_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    base = await serving(nursery, RETRY_LATER)
    async with (
        webhook_server(ca.issue_cert("localhost"), host="localhost") as hook,
        httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http,
    ):
        assert hook.url.startswith("https://localhost:")
        await start(http, "2", "many", taskPushNotificationConfig={"url": hook.url})
        got = await hook.wait_for_state("TASK_STATE_COMPLETED")
    assert [d.kind for d in got] == ["task", "artifactUpdate", "artifactUpdate", "statusUpdate"]
    assert len({d.client for d in got}) == 1  # one TLS connection for the task's events


@pytest.mark.parametrize(
    ("name", "trusted", "said"),
    [
        pytest.param(
            "localhost",
            False,
            "unable to get local issuer certificate (if its CA is a private one, set"
            " SSL_CERT_FILE to a PEM file holding it)",
            id="a private CA not trusted",
        ),
        pytest.param(
            "hooks.example",
            True,
            "Hostname mismatch, certificate is not valid for 'localhost'.",
            id="a certificate for another name",
        ),
    ],
)
async def test_a_webhook_certificate_that_does_not_verify_is_logged_after_one_try(
    nursery: trio.Nursery,
    ca: trustme.CA,
    ca_file: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    name: str,
    trusted: bool,
    said: str,
) -> None:
    """The next try would get the same certificate, so there is none; the line says what
    OpenSSL refused, and what to do about a private CA."""
    if trusted:
        monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    else:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    base = await serving(nursery, RETRY_LATER)
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with (
            webhook_server(ca.issue_cert(name), host="localhost") as hook,
            httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http,
        ):
            task_id = await start(http, "1", "many", taskPushNotificationConfig={"url": hook.url})
            first = await _first_failure(caplog)
    assert first == (
        f"push notification for task {task_id} not delivered to {hook.url}: TLS handshake"
        f" failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: {said}"
    )
    assert hook.attempts == 0


class Counted(logging.Handler):
    """Each line logged, with how many connections ``count()`` said were made by then."""

    def __init__(self, count: Callable[[], int]) -> None:
        super().__init__()
        self.count = count
        self.lines: list[tuple[str, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.getMessage(), self.count()))


async def test_an_https_url_to_a_plain_http_webhook_is_tried_again_and_said(
    nursery: trio.Nursery,
) -> None:
    """A handshake that fails for another reason than the certificate is tried again, as a
    network error is (it may not happen next time), and the line says what it looks like."""
    connections = 0

    async def plain_http(stream: trio.SocketStream) -> None:
        nonlocal connections
        connections += 1
        await stream.send_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        await stream.aclose()

    listeners = await nursery.start(partial(trio.serve_tcp, plain_http, 0, host="127.0.0.1"))
    url = f"https://127.0.0.1:{listeners[0].socket.getsockname()[1]}/hook"
    push = PushSettings(retry_wait=0.05, timeout=2, allow_private_networks=True)
    base = await serving(nursery, push)
    counted = Counted(lambda: connections)
    logger = logging.getLogger("a2a_trio.push")
    logger.addHandler(counted)
    try:
        async with httpx.AsyncClient(base_url=base, headers=V1_HEADERS, timeout=10) as http:
            task_id = await start(http, "1", "many", taskPushNotificationConfig={"url": url})
            with trio.fail_after(10):
                while not counted.lines:  # noqa: ASYNC110 (a log handler, polled)
                    await trio.sleep(0.02)
    finally:
        logger.removeHandler(counted)
    # logged as the first event's last try failed: the next event had not begun
    assert counted.lines[0] == (
        f"push notification for task {task_id} not delivered to {url}: TLS handshake failed:"
        " [SSL: WRONG_VERSION_NUMBER] wrong version number (is it a plain http:// server?)",
        push.attempts,
    )


async def _first_failure(caplog: pytest.LogCaptureFixture) -> str:
    """The first delivery failure logged, within 10 s (a retry would come after 30)."""
    with trio.fail_after(10):
        while True:
            for record in caplog.records:
                if "not delivered to" in record.getMessage():
                    return record.getMessage()
            await trio.sleep(0.02)


async def test_a_pinned_connection_verifies_the_certificate_against_the_urls_name(
    ca: trustme.CA, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Without private networks, a connection goes to the address the webhook's name was
    checked at, not to the name: TLS must still be asked for the name in the URL, or every
    certificate would be checked against an IP address.  The webhook's certificate names
    ``hooks.tls.test``, which resolves to 127.0.0.1 here; loopback passes the public-address
    check in this test alone, since no public address can be had in it."""
    trio.socket.set_custom_hostname_resolver(NameServer("hooks.tls.test", "127.0.0.1"))
    monkeypatch.setattr(_webhook_client, "first_non_public", lambda addresses: None)
    tls = ssl.create_default_context()
    ca.configure_trust(tls)
    public_only = PushSettings(timeout=2, attempts=1)
    assert not public_only.allow_private_networks
    event = b'{"statusUpdate": {}}'
    failures = ThrottledLog(logging.getLogger("a2a_trio.push"))
    with caplog.at_level(logging.WARNING, logger="a2a_trio.push"):
        async with (
            WebhookClient(public_only, failures, tls) as client,
            webhook_server(ca.issue_cert("hooks.tls.test"), host="hooks.tls.test") as hook,
            webhook_server(ca.issue_cert("elsewhere.test"), host="hooks.tls.test") as imposter,
        ):
            await client.post(m.TaskPushNotificationConfig(url=hook.url, task_id="t1"), event)
            await client.post(m.TaskPushNotificationConfig(url=imposter.url, task_id="t2"), event)
    assert [d.body for d in hook.received] == [{"statusUpdate": {}}]
    assert imposter.attempts == 0
    (refused,) = [record.getMessage() for record in caplog.records]
    assert refused.startswith(f"push notification for task t2 not delivered to {imposter.url}")
    assert "Hostname mismatch, certificate is not valid for 'hooks.tls.test'" in refused


@pytest.mark.parametrize(
    ("named", "said"),
    [
        ("missing.pem", "(No such file or directory)"),
        ("junk.pem", "([X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate or crl found)"),
    ],
)
async def test_a_trust_store_that_cannot_be_loaded_stops_serving_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str, said: str
) -> None:
    """With push notifications on, ``serve`` loads the CAs first and raises, as itself, what
    is wrong with ``SSL_CERT_FILE``; nothing is served."""
    (tmp_path / "junk.pem").write_text("not a certificate\n")
    path = str(tmp_path / named)
    monkeypatch.setenv("SSL_CERT_FILE", path)
    config = ServerConfig(push=PushSettings())
    async with trio.open_nursery() as nursery:
        with pytest.raises(TrustStoreError) as refused:
            await nursery.start(partial(serve, agent, port=0, config=config))
    assert str(refused.value) == (
        f"SSL_CERT_FILE={path!r} cannot be loaded as CA certificates {said}: name a PEM file"
        " of the CAs to trust, or unset it to trust certifi's bundle"
    )
