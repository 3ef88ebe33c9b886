"""Run an ASGI app (Starlette) with uvicorn inside our own asyncio loop."""

import asyncio
import contextlib
import socket

import uvicorn


class _EmbeddedServer(uvicorn.Server):
    def __init__(self, config):
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self):
        # The host program owns SIGINT/SIGTERM, not the server embedded in it.
        yield

    async def startup(self, sockets=None):
        await super().startup(sockets=sockets)
        self.ready.set()


class HttpServer:
    """`port = await HttpServer(app).start(host, port)`, later `await close()`."""

    def __init__(self, app):
        self._app = app
        self._server = None
        self._task = None

    async def start(self, host="127.0.0.1", port=0):
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
        # and without it each response waited out Nagle and delayed ACK (about 40 ms).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        config = uvicorn.Config(self._app, log_level="warning", lifespan="auto")
        self._server = _EmbeddedServer(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        ready = asyncio.create_task(self._server.ready.wait())
        await asyncio.wait([ready, self._task], return_when=asyncio.FIRST_COMPLETED)
        if not ready.done():
            ready.cancel()
            await self._task  # startup failed: surface its exception
            raise RuntimeError("HTTP server on %s:%d did not start" % (host, port))
        return sock.getsockname()[1]

    async def close(self):
        if self._task is not None:
            self._server.should_exit = True
            await self._task
