# The board's own MCP endpoint as a service of the application (config.json's mcp_http):
# it listens from boot, and loads its code (mcplink.http, unet.httpd: about 20 KB of
# bytecode as .mpy) at the first connection, so a board whose endpoint no client uses
# keeps that heap for its session.
import asyncio

from umcp.compat import get_logger

_log = get_logger("mcp-http")


class McpHttpService:
    """`make()` builds the mcplink.http.McpHttp that serves every connection, when the
    first one arrives; `bind`, `port`: where to listen. async run() and stop(), as the
    application's services have."""

    def __init__(self, make, bind, port):
        self.make = make
        self.bind = bind
        self.port = port
        self.endpoint = None
        self._server = None
        self._stopped = None

    async def run(self):
        self._server = await asyncio.start_server(self.accept, self.bind, self.port, backlog=4)
        _log.info("MCP endpoint listening on port %d", self.port)
        self._stopped = asyncio.Event()
        try:
            await self._stopped.wait()
        finally:
            await self.stop()

    async def accept(self, reader, writer):
        """Serve one connection the listener accepted: the endpoint is made at the first;
        if it cannot be (MemoryError among others), the connection is closed, and the next
        one tries again."""
        if self.endpoint is None:
            try:
                self.endpoint = self.make()
            except Exception as e:  # MemoryError among them: the board carries on
                _log.error("the MCP endpoint could not start: %r", e)
                writer.close()
                await writer.wait_closed()
                return
        await self.endpoint.httpd.serve(reader, writer)

    async def stop(self):
        server, self._server = self._server, None
        if server is not None:
            server.close()
            try:
                await server.wait_closed()
            except Exception:
                pass
        if self.endpoint is not None:
            await self.endpoint.stop()
        if self._stopped is not None:
            self._stopped.set()
