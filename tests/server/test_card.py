"""The agent card: derived from declarations, cacheable, addressed by Host or public URL."""

from __future__ import annotations

from functools import partial

import httpx
import trio

from a2a_trio import ServerConfig, serve

from .agents import agent


async def test_card_is_derived_from_the_agent(http: httpx.AsyncClient, base_url: str) -> None:
    response = await http.get("/.well-known/agent-card.json")
    card = response.json()
    assert card["name"] == "test agent"
    assert card["version"] == "0.0.1"
    skills = {skill["id"]: skill for skill in card["skills"]}
    assert skills["echo"]["description"] == "Complete with the received text."
    assert skills["echo"]["tags"] == ["test"]
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": False,
        "extendedAgentCard": False,
    }
    v1_jsonrpc = {"url": base_url + "/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    assert card["supportedInterfaces"][0] == v1_jsonrpc  # the preferred interface


async def test_card_revalidates_with_etag(http: httpx.AsyncClient) -> None:
    first = await http.get("/.well-known/agent-card.json")
    assert first.headers["cache-control"].startswith("public, max-age=")
    assert first.headers["vary"] == "Host"  # the card names the request's Host
    etag = first.headers["etag"]
    again = await http.get("/.well-known/agent-card.json", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    stale = await http.get("/.well-known/agent-card.json", headers={"If-None-Match": '"x"'})
    assert stale.status_code == 200


async def test_card_urls_follow_the_host_or_the_configured_public_url(
    http: httpx.AsyncClient, nursery: trio.Nursery
) -> None:
    proxied = await http.get("/.well-known/agent-card.json", headers={"Host": "agents.example"})
    urls = {i["url"] for i in proxied.json()["supportedInterfaces"]}
    assert all(url.startswith("http://agents.example") for url in urls)

    config = ServerConfig(public_url="https://a2a.example.com/base")
    url = await nursery.start(partial(serve, agent, port=0, config=config))
    async with httpx.AsyncClient(base_url=url) as client:
        card = (await client.get("/.well-known/agent-card.json")).json()
    urls = {i["url"] for i in card["supportedInterfaces"]}
    assert all(url.startswith("https://a2a.example.com/base") for url in urls)


async def test_every_skill_has_a_tag_on_both_cards(http: httpx.AsyncClient) -> None:
    """A2A v1.0 §5.7: ``tags`` is REQUIRED and a REQUIRED list holds at least one element; a
    skill declared without tags is listed under its id (v0.3's card requires tags too)."""
    for path in ("/.well-known/agent-card.json", "/.well-known/agent.json"):
        skills = {skill["id"]: skill for skill in (await http.get(path)).json()["skills"]}
        assert skills["echo"]["tags"] == ["test"]  # declared
        assert all(
            skill["tags"] == [skill_id] for skill_id, skill in skills.items() if skill_id != "echo"
        )
