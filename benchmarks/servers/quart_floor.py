"""A minimal quart-trio app under hypercorn's trio worker: the web framework's own cost.

``POST /`` reads the body and answers the same fixed JSON-RPC result as ``asgi_floor.py``.
"""

from __future__ import annotations

import trio
from asgi_floor import RESULT
from behaviour import raise_fd_limit, server_args
from hypercorn_run import serve_and_publish
from quart import Response, request
from quart_trio import QuartTrio


def build_app() -> QuartTrio:
    """One route, no middleware."""
    app = QuartTrio(__name__)

    @app.post("/")
    async def rpc() -> Response:
        await request.get_data()
        return Response(RESULT, content_type="application/json")

    return app


def main() -> None:
    args = server_args(__doc__ or "")
    raise_fd_limit()
    trio.run(serve_and_publish, build_app(), args.port_file)


if __name__ == "__main__":
    main()
