"""The board's own MCP endpoint over HTTP as a service of the application (config.json's
mcp_http): umcpfw.boot checks the settings and sets the network host name at boot (that
code leaves the heap with boot's); the service listens from then on, and loads its code
(mcplink.http, unet.httpd: about 20 KB of heap even from ROMFS) at the first
connection, so a board whose endpoint no client uses keeps that heap for its session. Once no connection is open and no legacy session
is kept for IDLE_S seconds, the endpoint and its code leave the heap again (the next
connection loads them anew): a client that came once does not cost the board 20 KB for
good. With `discovery` (the default: config.json's mcp_http "mdns") it also answers mDNS
queries for the `_mcp._tcp` service record once the board has an address: this module holds
the UDP socket and its receive loop, and unet.mdns is loaded only for a packet that may ask
for the board, and forgotten after its answer."""

import asyncio
import gc

from umcp.compat import await_then_drop, call_then_forget, const, forget_modules, get_logger
from unet import close_quietly

SETTLE_S = const(3)  # after the board has an address, before taking UDP 5353: the ESP32
# port starts its own responder at that moment, and must find the port free (else .local
# names stop resolving on the board and for it)
MDNS_POLL_S = 0.25  # MicroPython (no datagram API in its asyncio): how often the socket is read
IDLE_S = const(2)  # without a connection or a session this long, the endpoint's code goes
# What the endpoint loads at its first connection, and forgets when idle (what those load
# later, a revision family's code, the refusals' texts, they forget as the endpoint stops:
# their names take no heap here while the service listens).
_LOADED = ("mcplink.http", "mcplink.httpexchange", "unet.httpd")

_log = get_logger("mcp-http")

# The answer to a connection the endpoint could not be made for (the heap short at that
# moment): a constant, so that saying so takes no heap of its own. A client (Cursor, the
# SDK) shows the status and the text, and may retry, instead of a connection reset.
_UNAVAILABLE = const(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
                     b"Retry-After: 5\r\nConnection: close\r\nContent-Length: 70\r\n\r\n"
                     b"no heap free on the board for the MCP endpoint now: retry in a moment\n")
_DRAIN_BYTES = const(2048)  # at most, of what the client sent, read before it (a request's
# head and a small body)
# While the endpoint is loaded, the collector runs after this many times the bytes main.py
# set (2 KB: 32 KB on a stock ESP32, more than is free there with the endpoint loaded, so
# it runs when the heap is full). Each run marks the whole heap in use, about 100 KB with
# the endpoint's code, and a request allocates a few KB and leaves almost nothing that
# stays; MicroPython counts toward the threshold every frame a call allocates and frees at
# once too (a function's with more than 11 words of locals and stack), so a call counts
# several KB more than it leaves: at every 2 KB the collector was most of a call's cost,
# and at 16 KB it ran before the heap was full once the endpoint took less of it (some 13
# KB free at 112K). Packing what stays (main.py's reason) matters for the session's other
# work, which has it back when the endpoint goes idle.
_SERVING_COLLECTS = const(16)


def endpoint_maker(app, token, port, bind, hostname, options):
    """make() for McpHttpService: the McpHttp of the Application `app`'s server, with
    config.json's `mcp_http` options (umcpfw.boot checked them), built when called."""
    wlan = app.board.wlan

    def endpoint():  # at the first connection: the endpoint's code loads then
        from mcplink.http import McpHttp

        # Bodies bounded as the link's messages are: config.json's max_message, else the
        # limit the heap gave the latest session.
        return McpHttp(app.server, token, port, bind,
                       max_message=app.max_message or app.server.max_message,
                       max_requests=options.get("max_requests", 4),
                       max_sessions=options.get("max_sessions", 4), hostname=hostname,
                       address=None if wlan is None else (lambda: wlan.ifconfig()[0]),
                       origins=options.get("origins") or ())

    return endpoint


class Discovery:
    """What the mDNS service record says and where it listens: the board's `hostname`, its
    `auth` ("token" or "none"), `address()` (the board's IPv4 address as text, None without
    a network interface), `bind` ("0.0.0.0" joins the multicast group) and UDP `port`."""

    def __init__(self, hostname, auth, address, bind="0.0.0.0", port=5353):
        self.hostname = hostname
        self.auth = auth
        self.address = address
        self.bind = bind
        self.port = port


async def _serve_mdns(sock, group, found, port):
    """The responder's receive loop on `sock` (unet.mdns.open_socket's), for the service on
    HTTP `port`: a packet that may ask for the board (a query naming `_mcp` or its host
    name: a cheap look, no parse) loads unet.mdns for its answer; the rest costs nothing.
    A malformed packet is dropped, with one log line for a run of them; so is a query the
    heap has no room for (a heap in fragments), and the loop goes on."""
    loop = asyncio.get_event_loop()
    recvfrom = getattr(loop, "sock_recvfrom", None)  # CPython; MicroPython has none
    poller = None
    if recvfrom is None:
        import select

        poller = select.poll()
        poller.register(sock, select.POLLIN)
    host = found.hostname.lower().encode()
    upper = found.hostname.upper().encode()  # (a name in mixed case is not looked for)
    where = found.address or _none
    streak = short = False  # a run of malformed packets; of packets the heap had no room for
    while True:
        try:
            if recvfrom is not None:
                packet, sender = await recvfrom(sock, 1500)
            else:
                ready = False
                for _ in poller.ipoll(0):
                    ready = True
                if not ready:
                    await asyncio.sleep(MDNS_POLL_S)
                    continue
                try:
                    packet, sender = sock.recvfrom(1500)
                except OSError:  # not there after all
                    continue
            if len(packet) < 12 or packet[2] & 0x80 or not (b"_mcp" in packet or host in packet or upper in packet):
                continue  # a response, or no question of ours: not read further
            answer = call_then_forget("unet.mdns", "respond", packet, sender, found.hostname, port,
                                      found.auth, where(), group is not None)
        except MemoryError:
            # No block free for the packet (it waits in the socket) or for unet.mdns (that
            # query goes unanswered: a client asks again): the responder carries on.
            packet = sender = None
            if not short:
                short = True
                _log.warning("no heap for an mDNS query: not logged again until one is answered")
            await asyncio.sleep(MDNS_POLL_S)
            continue
        packet = sender = None
        short = False
        if answer is False:
            if not streak:
                streak = True
                _log.warning("malformed mDNS packet dropped; more are not logged until a good one")
            continue
        streak = False
        if answer is not None:
            try:
                sock.sendto(answer[0], answer[1] or group)
            except (OSError, MemoryError) as e:
                _log.warning("mDNS answer not sent: %r", e)
            answer = None


def address_of(wlan, bind):
    """Discovery's address(): the board's Wi-Fi address (`wlan`: its network interface), or
    without Wi-Fi (the host board) `bind`, where it listens; None when that is "0.0.0.0".
    (Made here, in a module that stays: a function keeps its module's globals, and so all
    of its module, on the heap.)"""
    if wlan is not None:
        return lambda: wlan.ifconfig()[0]
    if bind == "0.0.0.0":
        return None
    return lambda: bind


def _usable(address):
    return bool(address) and address != "0.0.0.0"


def _none():
    return None


def hostname_for(device_id):
    """The default network name: umcp- and the last 6 hex digits of the MAC
    (aa:bb:cc:dd:ee:ff -> umcp-ddeeff), or the device id made a name."""
    digits = "".join(c for c in device_id.lower() if c in "0123456789abcdef")
    if len(digits) == 12 and len(device_id) in (12, 17):
        return "umcp-" + digits[-6:]
    name = "".join(c if c.isalpha() or c.isdigit() else "-" for c in device_id.lower())
    return (name.strip("-")[:32] or "umcp").strip("-")


class McpHttpService:
    """`make()` builds the mcplink.http.McpHttp that serves every connection, when the
    first one arrives; `bind`, `port`: where to listen; `idle_s`: seconds without a
    connection or a legacy session after which that endpoint is stopped and its code
    forgotten (None: kept for good). async run() and stop(), as the application's
    services have."""

    def __init__(self, make, bind, port, idle_s=IDLE_S, discovery=None):
        self.make = make
        self.bind = bind
        self.port = port
        self.idle_s = idle_s
        self.discovery = discovery
        self.mdns_socket = None  # the mDNS responder's, while it answers
        self._answering = None  # its task
        self.endpoint = None
        self.made = 0  # endpoints made so far (the code loaded as often)
        self.accepted = 0  # connections accepted so far
        self._server = None
        self._stopped = None
        self._dropping = None  # the task that drops an idle endpoint
        self._threshold = None  # gc.threshold() to restore when the endpoint goes

    @property
    def listening(self):
        """Whether it listens: run() opened its socket and stop() has not closed it."""
        return self._server is not None

    async def run(self):
        self._server = await asyncio.start_server(self.accept, self.bind, self.port, backlog=4)
        _log.info("MCP endpoint listening on port %d", self.port)
        if self.discovery is not None:
            self._answering = asyncio.create_task(self._answer_mdns())
        self._stopped = asyncio.Event()
        try:
            await self._stopped.wait()
        finally:
            await self.stop()

    def accept(self, reader, writer):
        """Serve one connection the listener accepted: the endpoint is made at the first;
        if it cannot be (MemoryError among others), that connection is answered 503 with
        Retry-After and closed, and the next one tries again. Returns the coroutine that
        serves it (a plain function: no frame of its own for each connection but the small
        one of await_then_drop, so that the ended task keeps nothing of the endpoint's code
        once it is dropped)."""
        self.accepted += 1
        endpoint = self.endpoint
        if endpoint is None:
            try:
                endpoint = self.endpoint = self.make()
                self.made += 1
                endpoint.httpd.on_closed = self._closed
                self._collect_less()
            except Exception as e:  # MemoryError among them: the board carries on
                _log.error("the MCP endpoint could not start: %r", e)
                return _unavailable(reader, writer)
        return await_then_drop(endpoint.httpd.serve(reader, writer))

    def _closed(self):
        """A connection ended (the endpoint's httpd says so): once none is open and no
        legacy session kept, the endpoint is dropped after idle_s."""
        endpoint = self.endpoint
        if self.idle_s is not None and self._dropping is None and endpoint is not None and _idle(endpoint):
            self._dropping = asyncio.create_task(await_then_drop(self._drop_idle(self.accepted)))

    def _collect_less(self):
        """The collector's threshold raised for the endpoint's time (_SERVING_COLLECTS; where
        there is one: MicroPython's gc.threshold, set by main.py)."""
        threshold = getattr(gc, "threshold", None)
        if threshold is not None and self._threshold is None:
            now = threshold()
            if now > 0:
                self._threshold = now
                threshold(now * _SERVING_COLLECTS)

    def _collect_as_before(self):
        """The threshold _collect_less() found, back."""
        if self._threshold is not None:
            gc.threshold(self._threshold)
            self._threshold = None

    async def _drop_idle(self, accepted):
        """Once idle_s pass with no connection accepted (`accepted`: the count when the
        last connection closed), stop the endpoint if it is idle still, and forget its code.
        A connection meanwhile starts the wait again: idle at the moment of a check between
        two clients' calls is not idle for idle_s."""
        try:
            while True:
                await asyncio.sleep(self.idle_s)
                endpoint = self.endpoint
                if endpoint is None or not _idle(endpoint):
                    return  # in use: the connection's close schedules the next wait
                if self.accepted == accepted:
                    break
                accepted = self.accepted
            self.endpoint = None
            self._collect_as_before()
            await endpoint.stop()
            forget_modules(*_LOADED)
            _log.info("MCP endpoint idle: its code unloaded until the next connection")
        finally:
            self._dropping = None

    async def _answer_mdns(self):
        """Answer mDNS queries for the service record (`discovery`: a Discovery) once the
        board has an address, until stopped; where UDP 5353 is not free (the ESP32 port's
        own responder), unet.mdns said so, and this ends."""
        found = self.discovery
        address = found.address
        while address is not None and not _usable(address()):
            await asyncio.sleep(SETTLE_S)
        if address is not None:
            await asyncio.sleep(SETTLE_S)
        opened = call_then_forget("unet.mdns", "open_socket", found.bind, found.port, found.hostname)
        if opened is not None:
            self.mdns_socket = opened[0]
            try:
                await _serve_mdns(opened[0], opened[1], found, self.port)
            finally:
                self.mdns_socket = None
                opened[0].close()

    async def stop(self):
        answering, self._answering = self._answering, None
        if answering is not None:
            answering.cancel()
        server, self._server = self._server, None
        if server is not None:
            await close_quietly(server)
        dropping = self._dropping
        if dropping is not None:
            dropping.cancel()
        endpoint, self.endpoint = self.endpoint, None
        self._collect_as_before()
        if endpoint is not None:
            await endpoint.stop()
        if self._stopped is not None:
            self._stopped.set()


async def _unavailable(reader, writer):
    """_UNAVAILABLE on a connection, then closed. What the client sent is read first, a few
    small reads until it pauses: a close with bytes unread resets the connection, and the
    client would see the reset instead of the answer. (unet.httpdrefusal drains the same
    way, but it is the heap this answers the lack of: neither it nor unet.httpd is loaded
    for this.)"""
    read = 0
    try:
        while read < _DRAIN_BYTES:
            data = await asyncio.wait_for(reader.read(256), 0.2)
            if not data:
                break
            read += len(data)
    except Exception:  # a pause (the request is in), the client gone, the heap short
        pass
    try:
        writer.write(_UNAVAILABLE)
        await writer.drain()
    except Exception:
        pass
    await close_quietly(writer)


def _idle(endpoint):
    """No connection open, no legacy session kept (it may come back: its state stays)."""
    return not endpoint.httpd.connections and not getattr(endpoint, "sessions", None)
