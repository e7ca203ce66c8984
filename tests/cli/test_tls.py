"""The command and an agent served over HTTPS with a certificate from a private CA (trustme):
refused with what to do about it, then trusted through ``SSL_CERT_FILE``; an
``SSL_CERT_FILE`` that cannot be loaded is one line, for clients and servers alike."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from .test_cli import ENV, MEMORY, QUIET, assert_one_line_error, run

HYPERCORN = str(Path(sys.executable).with_name("hypercorn"))
UNTRUSTED = {k: v for k, v in ENV.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}


@pytest.fixture(scope="module")
def https_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The demo agent behind hypercorn over HTTPS at ``https://localhost:PORT``, its
    certificate from a test CA: its URL, and the CA's PEM file."""
    ca = trustme.CA()
    keys = tmp_path_factory.mktemp("tls")
    ca.cert_pem.write_to_path(str(keys / "ca.pem"))
    ca.issue_cert("localhost").private_key_and_cert_chain_pem.write_to_path(str(keys / "agent.pem"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [HYPERCORN, "-k", "trio", "--bind", f"127.0.0.1:{port}", "--workers", "0"]
    command += ["--certfile", str(keys / "agent.pem"), "--keyfile", str(keys / "agent.pem")]
    env = UNTRUSTED | {"A2A_TRIO_STORE": "memory"}
    with subprocess.Popen(
        [*command, "a2a_trio.app:app"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as server:
        try:
            _wait_until_listening(port, server)
            yield f"https://localhost:{port}", str(keys / "ca.pem")
        finally:
            server.kill()
            server.wait(timeout=10)


def _wait_until_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read() if server.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"hypercorn did not listen on {port} within 30 s")


def test_an_agent_whose_ca_is_private_is_refused_with_what_to_do(
    https_agent: tuple[str, str],
) -> None:
    url, _ = https_agent
    result = run("card", url, env=UNTRUSTED)
    assert_one_line_error(
        result,
        2,
        "TLS handshake failed: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed:"
        " unable to get local issuer certificate (if its CA is a private one, set SSL_CERT_FILE"
        " to a PEM file holding it)",
    )


def test_ssl_cert_file_trusts_a_private_ca(https_agent: tuple[str, str]) -> None:
    url, ca_file = https_agent
    result = run("send", url, "over tls", env=UNTRUSTED | {"SSL_CERT_FILE": ca_file})
    assert (result.returncode, result.stderr) == (0, "")
    assert "COMPLETED" in result.stdout


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("send", "http://127.0.0.1:9/", "hi"), id="a client"),
        pytest.param(
            ("serve", "a2a_trio.demo:agent", "--port", "0", *MEMORY, *QUIET, "--push", "on"),
            id="a server pushing to webhooks",
        ),
    ],
)
def test_an_ssl_cert_file_that_cannot_be_loaded_is_one_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    """Before, the client said "No such file or directory" without naming the file, and the
    server's lifespan failed with a traceback at its first push."""
    missing = str(tmp_path / "ca.pem")
    result = run(*command, env=UNTRUSTED | {"SSL_CERT_FILE": missing})
    assert_one_line_error(
        result,
        1,
        f"SSL_CERT_FILE={missing!r} cannot be loaded as CA certificates (No such file or"
        " directory): name a PEM file of the CAs to trust, or unset it to trust certifi's"
        " bundle",
    )
