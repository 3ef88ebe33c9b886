# The board's MCP endpoint as the application's service (umcpfw.mcp_http): its code and
# objects are made at the first connection, not at boot; an endpoint that cannot be made
# closes that connection and leaves the service listening for the next. Over in-memory
# streams (the sockets are tested through the simulated board: tests/firmware).
from test_portable_unet_httpd import Stream, echo
from umcpfw.mcp_http import McpHttpService
from unet.httpd import HttpServer


class Endpoint:
    """What McpHttpService needs of mcplink.http.McpHttp: its httpd, and stop()."""

    def __init__(self):
        self.httpd = HttpServer(echo)
        self.stopped = False

    async def stop(self):
        self.stopped = True
        await self.httpd.stop()


class Maker:
    """make() for the service: counts its calls; the first `failures` raise MemoryError."""

    def __init__(self, failures=0):
        self.failures = failures
        self.calls = 0
        self.made = None

    def __call__(self):
        self.calls += 1
        if self.calls <= self.failures:
            raise MemoryError("no room for the endpoint")
        self.made = Endpoint()
        return self.made


async def test_the_endpoint_is_made_at_the_first_connection_only():
    maker = Maker()
    service = McpHttpService(maker, "127.0.0.1", 8080)
    assert maker.calls == 0 and service.endpoint is None  # booted: nothing made yet
    for path in ("/a", "/b"):
        stream = Stream(b"GET %s HTTP/1.1\r\n\r\n" % path.encode())
        await service.accept(stream, stream)
        (status, _, body), = stream.responses()
        assert status == 200 and body.startswith(b"GET " + path.encode())
    assert maker.calls == 1 and service.endpoint is maker.made
    await service.stop()
    assert maker.made.stopped


async def test_an_endpoint_that_cannot_be_made_closes_that_connection_only():
    maker = Maker(failures=1)
    service = McpHttpService(maker, "127.0.0.1", 8080)
    first = Stream(b"GET /a HTTP/1.1\r\n\r\n")
    await service.accept(first, first)
    assert first.closed and not first.out and service.endpoint is None
    second = Stream(b"GET /b HTTP/1.1\r\n\r\n")
    await service.accept(second, second)
    assert [status for status, _, _ in second.responses()] == [200] and maker.calls == 2
    await service.stop()
    assert maker.made.stopped
