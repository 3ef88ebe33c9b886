"""The application: settings, board, MCP server, the OTA check, the xiaozhi link and the MCP
endpoint links on one asyncio loop. What is built once at the start lives in umcpfw.boot,
loaded for that and dropped again. start() is what /main.py runs."""

import asyncio
import sys
import time

from umcp import __version__
from umcp.compat import await_then_forget, call_then_forget, const, get_logger, remove_log_sink
from umcpfw import WIFI_CHECK_S, ConfigError, log, log_exception  # (its log is the application's)

VERSION = __version__  # the firmware is umcp's release
_LINK_RESTART_S = const(2)
_STARVED_AFTER = const(3)  # attempts in a row out of heap before the log says what it means
# The largest incoming message when config.json sets no max_message: an eighth of the heap
# free as a session starts (a message is held as its bytes and its parsed objects at
# once), no more than one block the heap can give then, between these bounds.
MAX_MESSAGE_CAP = 32768
MAX_MESSAGE_FLOOR = 2048
_STOP_S = const(3)  # a goodbye's time: longer than a WebSocket's closing handshake (2 s), so a
# silent peer's socket is still closed by the link itself
_MICROPYTHON = sys.implementation.name == "micropython"
CONFIG_FILE = "config.json"
# Something that ends the application after it ran this long (a bug on a rare path, the heap
# run out where nothing could catch it) gets a fresh start; what ends it sooner would end
# the next start the same way, so the board stays at the REPL saying why, not in a loop.
RESTART_AFTER_S = 60


def max_message_for(free):
    """The incoming message limit for `free` bytes of heap (None: unknown, as on CPython)."""
    if free is None:
        return MAX_MESSAGE_CAP
    return max(MAX_MESSAGE_FLOOR, min(MAX_MESSAGE_CAP, free // 8 // 1024 * 1024))


def message_limit():
    """The incoming message limit for a session starting now (config.json's max_message
    unset): max_message_for() the heap free now, halved until the heap can give it in one
    piece (the bytes of a message are one block): a limit the board can really decode."""
    free = free_heap()
    limit = max_message_for(free)
    while free is not None and limit > MAX_MESSAGE_FLOOR:
        try:
            bytearray(limit)  # tried, then garbage
            break
        except MemoryError:
            limit //= 2
    return limit


def free_heap():
    """Bytes of heap free after a collection, or None where gc cannot tell (CPython)."""
    import gc

    if not hasattr(gc, "mem_free"):
        return None
    gc.collect()
    return gc.mem_free()


class Application:
    # Class defaults: what an application has not set yet (or at all) costs no heap.
    version = VERSION
    tools = None
    ota = None  # where config.json has an ota_url: the OTA check's side (umcpfw.fleet)
    link = None  # built in run(), once the OTA check said where to connect
    hostname = None  # the board's network name, where mcp_http set it (umcpfw.mcphttp)
    endpoints = ()  # one MCP endpoint link per URL (a service): umcpfw.linkconfig
    stopped = False
    _reboot_task = None
    _wifi_task = None
    _ota_task = None
    status_view = None  # umcpfw.statusview, where a screen part (oled, lcd) has "status": true
    wifi_setup = None  # the access point and its page, while that mode runs

    def __init__(self, config, serial=False):
        self.config = config
        # Served over the serial line (umcpfw.mcpserial): no server to reach is needed.
        self.serial = serial
        # Other ways clients reach the same server, run beside the link: objects with
        # async run() (serves until cancelled or stop()) and async stop().
        self.services = []
        self._tasks = []  # the services' tasks and the board's upkeep
        # Log ring, settings, board, trust, vision, server and tools, the OTA check: built
        # by umcpfw.boot, whose code then leaves the heap (with what else the start loaded).
        call_then_forget("umcpfw.boot", "build", self)
        if config.get("mcp_endpoint"):  # their links: made once the start's code has gone
            call_then_forget("umcpfw.linkconfig", "add_endpoints", self)

    def build_link(self):
        """The link for where to connect (umcpfw.linkconfig, loaded for it)."""
        link = call_then_forget("umcpfw.linkconfig", "build_link", self)
        link.on_starved = self.starved
        return link

    def starved(self, who, count):
        """A link's on_starved (and the link task's own): `count` attempts in a row ran out
        of heap before connecting. Said once a streak, at _STARVED_AFTER: a board that
        cannot even connect will not get better by itself."""
        if count != _STARVED_AFTER:
            return
        import gc

        heap = ""
        if hasattr(gc, "mem_free"):  # MicroPython
            gc.collect()
            heap = " (%d of %d bytes of heap free now)" % (gc.mem_free(), gc.mem_free() + gc.mem_alloc())
        log.error("%sout of memory while connecting, %d times in a row%s: this configuration "
                  "needs more heap than the board has; fewer parts, no status screen or a "
                  "board with PSRAM (docs/boards.md)", who, count, heap)

    def message_limit(self):
        """message_limit() for the link's session starting now, kept as the server's too
        (what get_system_info reports and other transports announce)."""
        self.server.max_message = limit = message_limit()
        return limit

    # -- the OTA check

    def wifi_credentials(self):
        credentials = self.config.get("wifi") or {}
        return credentials.get("ssid"), credentials.get("password")

    def reboot(self, delay_ms=0):
        """Reset the device after delay_ms, on its own task so a reply can leave first (its
        code, umcpfw.orders', loaded only then)."""
        if self._reboot_task is None:
            self._reboot_task = asyncio.create_task(await_then_forget("umcpfw.orders", "reboot", self, delay_ms))

    async def stop(self):
        """End the link and the services, each the way its transport says goodbye."""
        self.stopped = True
        for task in self._tasks + [self._wifi_task, self._ota_task]:
            if task is not None:
                task.cancel()
        self._tasks = []
        for closing in [self.link] + self.services:
            if closing is not None:
                try:
                    await asyncio.wait_for(closing.stop(), _STOP_S)
                except BaseException:  # a goodbye that fails or hangs must not stop the rest
                    pass

    async def run(self):
        if self.status_view is not None:  # from the start: it shows the way there too
            self._tasks.append(asyncio.create_task(_serve(self.status_view)))
        wlan = self.board.wlan
        if wlan is not None:  # the host board has no radio
            if not await await_then_forget("umcpfw.station", "start", self, wlan):
                return  # the Wi-Fi setup ran, and the board restarts
            self._wifi_task = asyncio.create_task(keep_connected(self, wlan))
        # Settings, board, tools and network are up: this image boots well.
        from devsvc import mark_valid  # (not devsvc.upgrade: its code is an upgrade's)

        try:
            mark_valid()
        except Exception as e:
            log_exception("marking the firmware valid", e)
        log.info("%s %s as %s, client %s; messages up to %d bytes; %d MCP endpoint(s)",
                 self.board.name, VERSION, self.device_id, self.client_id, self.server.max_message,
                 len(self.endpoints))
        for service in self.services:
            self._tasks.append(asyncio.create_task(_serve(service)))
        upkeep = self.board.upkeep(self.server)  # the sensors' (its own task: no wrapper to keep)
        if upkeep is not None:
            self._tasks.append(asyncio.create_task(upkeep))
        if not self.xiaozhi:
            # MCP endpoints only: their links are services, serving on tasks of their own.
            while True:
                await asyncio.sleep(3600)
        if self.ota is not None:
            await self.ota.first_check()
            self._ota_task = asyncio.create_task(self.ota.periodic())
        starved = 0  # MemoryErrors in a row that stopped the link (at its build, mostly)
        while not self.stopped:
            # The link reconnects by itself; this guards against a bug escaping it, and
            # starts a new link when the OTA check brought other server settings. Nothing
            # ends this loop but stop() or cancellation: a MemoryError here is collected
            # and waited out, and a streak of them said to be the configuration's size.
            try:
                ran = await self._run_link()
                starved = 0
                if not ran:
                    continue  # it waited already
            except Exception as e:
                log_exception("link stopped", e)
                starved = starved + 1 if isinstance(e, MemoryError) else 0
                self.starved("", starved)
            await asyncio.sleep(_LINK_RESTART_S)

    async def _run_link(self):
        """Build the link and run it until it returns; False when it could not be built
        (after a pause, and the OTA check again where there is one)."""
        try:
            self.link = self.build_link()
        except ValueError as e:
            log.error("cannot connect: %s", e)
            await asyncio.sleep(_LINK_RESTART_S)
            if self.ota is not None:
                await self.ota.first_check()
            return False
        await self.link.run()
        return True


async def keep_connected(app, wlan, **retry):
    """The Wi-Fi station's upkeep on a board with a radio, on the main loop while the
    firmware runs: every wifi_check_interval seconds (config.json's), whether the station
    is up; when it is not, umcpfw.station.recover() (loaded for it) brings it back, or after
    wifi_lost_setup_after seconds restarts the Application `app` into the Wi-Fi setup.
    `retry`: recover()'s timings (tests shorten them). Here, not in a module of its own:
    a resident module is a module object, its dict and its path's name on the heap for good.

    The xiaozhi link notices the lost connection by itself and reconnects with its own
    backoff once the network is back.
    """
    check_s = app.config.get("wifi_check_interval", WIFI_CHECK_S)
    while True:
        await asyncio.sleep(check_s)
        try:
            if not wlan.isconnected():
                await await_then_forget("umcpfw.station", "recover", app, wlan, **retry)
        except OSError as e:  # a radio fault must not end the upkeep
            get_logger("wifi").warning("Wi-Fi upkeep: %r", e)


async def _serve(service):
    """A service's run(), logged rather than lost if it ends with an error."""
    try:
        await service.run()
    except Exception as e:
        log_exception("%s stopped" % type(service).__name__, e)


async def main(config, app=None):
    app = app or Application(config)
    try:
        await app.run()
    finally:  # stopped (cancelled, Ctrl-C): say goodbye where the transport has one
        await app.stop()


def run(config):
    """Run the application until it stops, in the same interpreter as often as asked (the
    REPL: `import main; main.run()` after Ctrl-C). ConfigError when config.json is unusable.
    Ctrl-C (KeyboardInterrupt, raised again) stops it cleanly: goodbyes said, sockets
    closed, its log sink removed, and nothing of this run left in asyncio for the next."""
    if _MICROPYTHON:
        asyncio.new_event_loop()  # what an earlier interrupted run left queued goes
    app = Application(config)
    try:
        if not _MICROPYTHON:
            # CPython's asyncio.run turns Ctrl-C into cancelling main(): its finally stops.
            asyncio.run(main(config, app))
            return
        loop = asyncio.get_event_loop()
        task = asyncio.create_task(main(config, app))
        try:
            loop.run_until_complete(task)
        except KeyboardInterrupt:
            # MicroPython's scheduler let the interrupt out between tasks (or from inside
            # one, which is gone): the others are still queued, the link's among them. The
            # goodbyes are said on the same loop, then the rest is dropped.
            # (When it came out of main() itself, main()'s finally said them already.)
            if not app.stopped:
                try:
                    loop.run_until_complete(asyncio.create_task(app.stop()))
                except BaseException:  # a second Ctrl-C: stop trying
                    pass
            raise
    finally:
        remove_log_sink(app.log_ring.add)
        if _MICROPYTHON:
            asyncio.new_event_loop()


def load_config(path=CONFIG_FILE):
    """config.json's object, info-level log lines set up first where a logging module
    exists; ConfigError saying what is wrong with it (umcpfw.boot does both: the start's
    code, which leaves the heap once the application is built)."""
    from umcpfw.boot import start_config

    return start_config(path)


def start():
    """/main.py's run(): run the firmware until it stops; again after Ctrl-C at the REPL
    (`main.run()`). True when it ran; False when config.json is unusable: its one line is
    printed and the board stays at the REPL (a SystemExit here would soft-reset into
    main.py again, a loop). Ctrl-C stops it cleanly and is raised again (the REPL shows
    it). Anything else that ends it resets the board after RESTART_AFTER_S of running;
    sooner, it is printed with its traceback and start() returns False (the REPL)."""
    started = time.time()
    try:
        run(load_config())
    except ConfigError as e:
        # Printed where `make repl` shows it; nothing else can run without a config.
        print("umcp cannot start:", e)
        return False
    except Exception as e:
        # Nothing should end the application but Ctrl-C.
        if time.time() - started < RESTART_AFTER_S:
            log_exception("umcp stopped at its start (a fresh start would stop the same way)", e)
            return False
        print("umcp stopped:", repr(e))  # after a good while: the board starts again
        import machine

        machine.reset()
    return True
