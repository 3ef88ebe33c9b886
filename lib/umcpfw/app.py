# The application: settings, board, MCP server, the OTA check and the xiaozhi link on one
# asyncio loop.
import asyncio
import sys

from umcp import __version__
from umcp.compat import const, forget_modules, get_logger

VERSION = __version__  # the firmware is umcp's release
SETTINGS_FILE = "settings.json"
_LINK_RESTART_S = const(2)
# The largest incoming message when config.json sets no max_message: an eighth of the heap
# free as a session starts (a message is held as its bytes and its parsed objects at
# once), no more than one block the heap can give then, between these bounds.
MAX_MESSAGE_CAP = 32768
MAX_MESSAGE_FLOOR = 2048

log = get_logger("app")


class ConfigError(ValueError):
    """config.json is missing or unusable; the message says what to fix."""


def log_exception(what, e):
    log.error("%s: %r", what, e)
    if isinstance(e, MemoryError):
        import gc

        gc.collect()  # and no traceback, which needs heap
    elif hasattr(sys, "print_exception"):
        try:
            sys.print_exception(e)
        except Exception:
            pass


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
    def __init__(self, config):
        self.config = config
        self.version = VERSION
        self.tools = None
        self.ota = None  # the OTA check (devsvc.otacheck), where config.json has an ota_url
        self.fleet = None
        self.link = None  # built in run(), once the OTA check said where to connect
        # Other ways clients reach the same server, run beside the link: objects with
        # async run() (serves until cancelled or stop()) and async stop().
        self.services = []
        self._tasks = []  # the services' tasks
        self._reboot_task = None
        self._wifi_task = None
        self._ota_task = None
        # Log ring, settings, board, trust, vision, server and tools, the OTA check: built
        # by umcpfw.boot, whose code then leaves the heap.
        from umcpfw import boot

        try:
            boot.build(self)
        finally:
            boot = None
            forget_modules("umcpfw.boot")

    def build_link(self):
        """The link for where to connect (umcpfw.boot, loaded for it)."""
        from umcpfw import boot

        try:
            return boot.build_link(self)
        finally:
            boot = None
            forget_modules("umcpfw.boot")

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
        """Reset the device after delay_ms, on its own task so a reply can leave first."""
        if self._reboot_task is None:
            self._reboot_task = asyncio.create_task(self._reboot(delay_ms))

    async def _reboot(self, delay_ms):
        log.warning("rebooting in %d ms", delay_ms)
        await asyncio.sleep(delay_ms / 1000)
        try:
            await self.link.stop()  # a clean close tells the backend we are going
        except Exception as e:
            log_exception("closing the link", e)
        import machine

        machine.reset()

    def on_system(self, message):
        if message.get("command") == "reboot":
            log.warning("server asked for a reboot")
            self.reboot(0)
        else:
            log.warning("ignoring system command %r", message.get("command"))

    def on_alert(self, message):
        log.warning("alert from server: %s %s", message.get("status"), message.get("message"))

    async def stop(self):
        """End the link and the services, each the way its transport says goodbye."""
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        for closing in [self.link] + self.services:
            if closing is not None:
                try:
                    await asyncio.wait_for(closing.stop(), 1)
                except BaseException:  # a goodbye that fails or hangs must not stop the rest
                    pass

    async def run(self):
        wlan = self.board.wlan
        if wlan is not None:  # the host board has no radio
            from umcpfw import wifi

            ssid, password = self.wifi_credentials()
            await wifi.connect(wlan, ssid, password)
            wifi.set_clock()  # certificate dates need it
            self._wifi_task = asyncio.create_task(wifi.keep_connected(wlan, ssid, password))
        # Settings, board, tools and network are up: this image boots well.
        try:
            _mark_valid()
        except Exception as e:
            log_exception("marking the firmware valid", e)
        log.info("%s %s as %s, client %s; messages up to %d bytes", self.board.name, VERSION,
                 self.device_id, self.client_id, self.server.max_message)
        for service in self.services:
            self._tasks.append(asyncio.create_task(_serve(service)))
        if self.fleet is not None:
            await self.fleet.first_check()
            self._ota_task = asyncio.create_task(self.fleet.periodic())
        while True:
            # The link reconnects by itself; this guards against a bug escaping it, and
            # starts a new link when the OTA check brought other server settings. Nothing
            # ends this loop but cancellation: a MemoryError here is collected and waited out.
            try:
                if not await self._run_link():
                    continue  # it waited already
            except Exception as e:
                log_exception("link stopped", e)
            await asyncio.sleep(_LINK_RESTART_S)

    async def _run_link(self):
        """Build the link and run it until it returns; False when it could not be built
        (after a pause, and the OTA check again where there is one)."""
        try:
            self.link = self.build_link()
        except ValueError as e:
            log.error("cannot connect: %s", e)
            await asyncio.sleep(_LINK_RESTART_S)
            if self.fleet is not None:
                await self.fleet.first_check()
            return False
        await self.link.run()
        return True


def _mark_valid():
    """upgrade.mark_valid(), without keeping devsvc.upgrade's bytecode on the heap for the whole
    session: an upgrade imports it again."""
    import devsvc
    from devsvc import upgrade

    try:
        upgrade.mark_valid()
    finally:
        sys.modules.pop("devsvc.upgrade", None)
        if hasattr(devsvc, "upgrade"):
            delattr(devsvc, "upgrade")


async def _serve(service):
    """A service's run(), logged rather than lost if it ends with an error."""
    try:
        await service.run()
    except Exception as e:
        log_exception("%s stopped" % type(service).__name__, e)


async def main(config):
    app = Application(config)
    try:
        await app.run()
    finally:  # stopped (cancelled, Ctrl-C): say goodbye where the transport has one
        await app.stop()
