# The board's MCP endpoint as the application's service (umcpfw.mcphttp): its code and
# objects are made at the first connection, not at boot; an endpoint that cannot be made
# answers that connection 503 and leaves the service listening for the next; an endpoint left
# idle (no connection, no legacy session) is stopped and its code forgotten until the next
# connection. Over in-memory streams (the sockets are tested through the simulated board:
# tests/firmware).
import asyncio
import sys

from test_portable_unet_httpd import Stream, echo
from umcpfw.mcphttp import McpHttpService
from unet.httpd import HttpServer


class Endpoint:
    """What McpHttpService needs of mcplink.http.McpHttp: its httpd, and stop()."""

    def __init__(self):
        self.httpd = HttpServer(echo)
        self.stopped = False
        self.sessions = []  # legacy sessions kept (mcplink.http's _HttpSession)

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


async def test_an_endpoint_that_cannot_be_made_answers_503_on_that_connection_only():
    maker = Maker(failures=1)
    service = McpHttpService(maker, "127.0.0.1", 8080)
    request = b"POST /mcp HTTP/1.1\r\nContent-Length: 20\r\n\r\n" + b"x" * 20
    first = Stream(request)
    await service.accept(first, first)
    (status, headers, body), = first.responses()
    assert status == 503 and headers["retry-after"] == "5" and headers["connection"] == "close"
    assert body == b"no heap free on the board for the MCP endpoint now: retry in a moment\n"
    assert first.pos == len(request)  # read before the answer: no reset on the close
    assert first.closed and service.endpoint is None
    second = Stream(b"GET /b HTTP/1.1\r\n\r\n")
    await service.accept(second, second)
    assert [status for status, _, _ in second.responses()] == [200] and maker.calls == 2
    await service.stop()
    assert maker.made.stopped


async def _turns(service, made, turns=20):
    """Let the loop run until `made`'s endpoint is gone from the service, or `turns` pass."""
    for _ in range(turns):
        if service.endpoint is not made:
            return
        await asyncio.sleep(0)


async def _get(service, path):
    stream = Stream(b"GET %s HTTP/1.1\r\n\r\n" % path.encode())
    await service.accept(stream, stream)
    return [status for status, _, _ in stream.responses()]


async def test_an_idle_endpoint_and_its_code_leave_the_heap_until_the_next_connection():
    import mcplink.http  # noqa: F401 (what the firmware's endpoint loads)

    maker = Maker()
    service = McpHttpService(maker, "127.0.0.1", 8080, idle_s=0)
    assert await _get(service, "/a") == [200]
    first = maker.made
    await _turns(service, first)
    assert service.endpoint is None and first.stopped and service.made == 1
    loaded = [name in sys.modules for name in ("mcplink.http", "mcplink.httpexchange", "unet.httpd")]
    # MicroPython: the code is forgotten (its bytecode goes at the next collection);
    # CPython keeps modules (memory is no concern there).
    assert loaded == [sys.implementation.name != "micropython"] * 3
    assert await _get(service, "/b") == [200]  # made again, loading the code again
    assert maker.calls == 2 and service.made == 2 and service.endpoint is maker.made
    await service.stop()
    assert maker.made.stopped and service.endpoint is None


async def test_connections_within_idle_s_keep_the_endpoint_though_none_is_open_at_the_check():
    # A client calling once every few hundred ms, each call on a connection of its own
    # (Home Assistant, curl), is never idle for idle_s: the endpoint stays made for it
    # instead of being dropped between two calls and loaded again at the next.
    maker = Maker()
    service = McpHttpService(maker, "127.0.0.1", 8080, idle_s=0.6)
    assert await _get(service, "/a") == [200]  # its close starts the idle wait
    made = maker.made
    await asyncio.sleep(0.3)
    assert await _get(service, "/b") == [200]  # within idle_s of /a
    await asyncio.sleep(0.5)  # past idle_s since /a, not since /b; no connection open
    assert service.endpoint is made and not made.stopped and service.accepted == 2
    for _ in range(30):  # then idle for idle_s since /b: dropped
        if service.endpoint is None:
            break
        await asyncio.sleep(0.1)
    assert service.endpoint is None and made.stopped and maker.calls == 1
    await service.stop()


async def test_a_kept_legacy_session_or_an_open_connection_keeps_the_endpoint():
    maker = Maker()
    service = McpHttpService(maker, "127.0.0.1", 8080, idle_s=0)
    assert await _get(service, "/a") == [200]
    made = maker.made
    made.sessions.append("a legacy session")  # its client may come back: its state stays
    assert await _get(service, "/b") == [200]
    await _turns(service, made)
    assert service.endpoint is made and not made.stopped
    # A connection open (a GET stream, a kept-alive client) keeps it too.
    made.sessions.clear()
    held = Stream(b"GET /c HTTP/1.1\r\n\r\n", hold=True)
    serving = asyncio.create_task(service.accept(held, held))
    await _turns(service, made)
    assert service.endpoint is made and not made.stopped and len(made.httpd.connections) == 1
    held.closed = True  # the client hangs up: now it is idle
    await serving
    await _turns(service, made)
    assert service.endpoint is None and made.stopped and maker.calls == 1
    await service.stop()


async def test_with_idle_s_none_the_endpoint_stays():
    maker = Maker()
    service = McpHttpService(maker, "127.0.0.1", 8080, idle_s=None)
    assert await _get(service, "/a") == [200]
    await _turns(service, maker.made)
    assert service.endpoint is maker.made and not maker.made.stopped
    await service.stop()
    assert maker.made.stopped


async def test_the_collector_runs_less_often_while_the_endpoint_is_loaded():
    # MicroPython: main.py has the collector run after every 2 KB allocated; a request over
    # the endpoint allocates several KB, so the endpoint has it run after 32 KB while it is
    # loaded, and gives 2 KB back when it goes (idle, or stopped). CPython has no such
    # threshold: nothing is set there.
    import gc

    threshold = getattr(gc, "threshold", None)
    before = threshold() if threshold is not None else None
    if threshold is not None:
        threshold(2048)
    seen = []
    try:
        maker = Maker()
        service = McpHttpService(maker, "127.0.0.1", 8080, idle_s=0)
        for path in ("/a", "/b"):
            assert await _get(service, path) == [200]
            seen.append(threshold and threshold())
            await _turns(service, maker.made)
            assert service.endpoint is None
            seen.append(threshold and threshold())
        assert await _get(service, "/c") == [200]
        await service.stop()
        seen.append(threshold and threshold())
    finally:
        if threshold is not None:
            threshold(before)
    assert seen == ([32768, 2048] * 2 + [2048] if threshold is not None else [None] * 5)
