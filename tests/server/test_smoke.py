"""The fixture serves, and a plain JSON-RPC SendMessage completes."""

import httpx

from .conftest import rpc, user_message


async def test_send_message_completes(http: httpx.AsyncClient) -> None:
    response = await http.post("/", json=rpc("SendMessage", {"message": user_message("hi")}))
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "hi"}]
