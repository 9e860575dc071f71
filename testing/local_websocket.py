"""A websocket server on a free 127.0.0.1 port, run on its own asyncio loop in a background
thread (the websockets library): what the fake Discord gateway and the fake Mattermost
websocket share. ``start()`` returns its ``ws://`` URL; ``run(coro)`` runs a coroutine on its
loop from any thread and returns the result."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

WAIT = 30.0


class LocalWebsocketServer:
    def __init__(self, handler: Callable[[Any], Any], *, name: str, logger: logging.Logger,
                 process_request: Callable[..., Any] | None = None):
        self._handler, self._name, self._logger = handler, name, logger
        self._process_request = process_request
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: Any = None
        self.url = ""

    def start(self) -> str:
        if self.loop is not None:
            return self.url
        started = threading.Event()
        self.loop = asyncio.new_event_loop()

        async def serve() -> Any:
            from websockets.asyncio.server import serve as ws_serve

            server = await ws_serve(self._handler, "127.0.0.1", 0, ping_interval=None,
                                    process_request=self._process_request, logger=self._logger)
            self.url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"
            return server

        def run() -> None:
            assert self.loop is not None
            asyncio.set_event_loop(self.loop)
            self._server = self.loop.run_until_complete(serve())
            started.set()
            self.loop.run_forever()

        self._thread = threading.Thread(target=run, name=self._name, daemon=True)
        self._thread.start()
        if not started.wait(WAIT):
            raise RuntimeError(f"{self._name} did not start")
        return self.url

    def run(self, coro: Any) -> Any:
        assert self.loop is not None, "start() the server first"
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(WAIT)

    def close(self) -> None:
        loop = self.loop
        if loop is None or not loop.is_running():
            return

        async def stop() -> None:
            self._server.close()
            await self._server.wait_closed()

        self.run(stop())
        loop.call_soon_threadsafe(loop.stop)
        assert self._thread is not None
        self._thread.join(WAIT)
        loop.close()
        self.loop = None
