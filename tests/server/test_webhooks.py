"""Which webhook URLs the server may POST to (server-side request forgery, A2A v1.0 §13.2)."""

from __future__ import annotations

import base64

import pytest

from a2a_trio.errors import InvalidParamsError
from a2a_trio.server._webhook_client import webhook_request
from a2a_trio.server._webhooks import Webhook, _kind_of_address, check_webhook, webhook_of


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),  # an IPv4-mapped address is that address
        ("169.254.169.254", "a link-local address (where cloud metadata services answer)"),
        ("fe80::1%eth0", "a link-local address (where cloud metadata services answer)"),
        ("10.1.2.3", "a private-network address"),
        ("192.168.0.10", "a private-network address"),
        ("fd00::5", "a private-network address"),
        ("100.64.0.1", "not a public unicast address"),  # carrier-grade NAT space
        ("224.0.0.251", "not a public unicast address"),
        ("0.0.0.0", "the unspecified address, which reaches this host"),
        ("::", "the unspecified address, which reaches this host"),
        ("93.184.215.14", None),
        ("2606:4700::1111", None),
    ],
)
def test_addresses_are_told_public_or_not(address: str, kind: str | None) -> None:
    assert _kind_of_address(address) == kind


def test_a_url_gives_its_host_and_the_port_a_connection_uses() -> None:
    assert webhook_of("https://hooks.example.com/a2a", path="$.url") == Webhook(
        "hooks.example.com", 443
    )
    assert webhook_of("http://[2001:db8::1]:8080/x?y=1", path="$.url") == Webhook(
        "2001:db8::1", 8080
    )
    for bad in ("", "hooks.example.com/a2a", "mailto:a@b.c", "http://host:99999/", "http:///x"):
        with pytest.raises(InvalidParamsError) as caught:
            webhook_of(bad, path="$.params.url")
        assert caught.value.path == "$.params.url"


async def test_the_check_resolves_names_and_refuses_private_answers() -> None:
    with pytest.raises(InvalidParamsError, match=r"reaches (127\.0\.0\.1|::1), a loopback"):
        await check_webhook("http://localhost/hook", path="$.url", allow_private_networks=False)
    allowed = await check_webhook(
        "http://localhost:9/hook", path="$.url", allow_private_networks=True
    )
    assert allowed == Webhook("localhost", 9)
    public = await check_webhook(
        "http://93.184.215.14/h", path="$.url", allow_private_networks=False
    )
    assert public.port == 80


def test_a_post_names_the_urls_host_and_sends_its_user_info_as_basic_credentials() -> None:
    target, headers = webhook_request(
        "https://us%40er:p%3Ass@[2001:db8::1]:8443/a/b?k=1#frag", {"Content-Type": "x"}
    )
    assert (target.scheme, target.host, target.port, target.target) == (
        b"https",
        b"2001:db8::1",
        8443,
        b"/a/b?k=1",
    )
    assert headers == [
        (b"Host", b"[2001:db8::1]:8443"),
        (b"Content-Type", b"x"),
        (b"Authorization", b"Basic " + base64.b64encode(b"us@er:p:ss")),
    ]
    # an international name goes out in its IDNA form; a config's own credentials win
    target, headers = webhook_request("http://a:b@b\u00fccher.example/h", {"Authorization": "T t"})
    assert target.host == b"xn--bcher-kva.example" and target.port is None
    assert headers == [(b"Host", b"xn--bcher-kva.example"), (b"Authorization", b"T t")]
    with pytest.raises(InvalidParamsError):
        webhook_request("ftp://example.com/h", {})
