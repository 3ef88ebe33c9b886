# The application: settings, board, MCP server, the OTA check, the xiaozhi link and the MCP
# endpoint links on one asyncio loop.
import asyncio
import sys

import boards
from devsvc.settings import Settings
from umcp import McpServer, __version__
from umcp.compat import add_log_sink, get_logger, remove_log_sink
from umcpfw.common_tools import CommonTools
from umcpfw.resources import DeviceResources, LogRing
from umcpfw.vision import VisionClient
from unet.conn import Trust

VERSION = __version__  # the firmware is umcp's release
SETTINGS_FILE = "settings.json"
_LINK_RESTART_S = 2
# Optional config.json keys handed to the link as they are (timings in seconds): to both
# transports, then to the WebSocket one only, then to the MQTT one only.
_LINK_OPTIONS = ("hello_timeout", "idle_timeout", "backoff_min", "backoff_max", "stable_after")
_WEBSOCKET_OPTIONS = ("protocol_version", "ping_interval")
_MQTT_OPTIONS = ("keepalive",)
# The largest incoming message when config.json sets no max_message: an eighth of the heap
# free at boot (a message is held as its bytes, its text and its parsed objects at once),
# between these bounds.
MAX_MESSAGE_CAP = 32768
MAX_MESSAGE_FLOOR = 2048
# The maker's own module on the board (/app.py, or a package /app/): its register(server,
# board) adds tools and resources after the board's. make deploy APP=path copies it.
MAKER_MODULE = "app"
_STOP_S = 3  # a goodbye's time: longer than a WebSocket's closing handshake (2 s), so a
# silent peer's socket is still closed by the link itself
_MICROPYTHON = sys.implementation.name == "micropython"

log = get_logger("app")


class ConfigError(ValueError):
    """config.json is missing or unusable; the message says what to fix."""


def log_exception(what, e):
    """An error line for the log (and device://log), and the traceback on the console."""
    log.error("%s: %r", what, e)
    if hasattr(sys, "print_exception"):
        sys.print_exception(e)
    else:
        import traceback

        traceback.print_exception(e)


def format_mac(raw):
    return ":".join("%02x" % b for b in raw)


def max_message_for(free):
    """The incoming message limit for `free` bytes of heap (None: unknown, as on CPython)."""
    if free is None:
        return MAX_MESSAGE_CAP
    return max(MAX_MESSAGE_FLOOR, min(MAX_MESSAGE_CAP, free // 8 // 1024 * 1024))


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
        # The recent log lines, for device://log: from here on (a fixed-size ring).
        self.log_ring = LogRing()
        add_log_sink(self.log_ring.add)
        self.settings = Settings(SETTINGS_FILE)
        # The board puts the saved volume, brightness and theme back onto its hardware.
        self.board = self.build_board()
        self.status_view = None  # umcpfw.statusview, where an OLED part has "status": true
        for part in self.board.parts:
            if part.kind == "oled" and part.status:
                from umcpfw.statusview import for_board  # only there (heap)

                self.status_view = for_board(self, part)
                break
        self.device_id = config.get("device_id") or self.mac_address()
        self.client_id = self.settings.get("client_id")  # a UUID made once by Settings
        # Whom wss:// and https:// trust: the shipped roots plus config.json's "ca"; TLS goes
        # unverified only with "tls_verify": false (a warning at every connection). A broken
        # "ca" or a tls_verify that is not true/false stops the start here, saying so.
        try:
            self.trust = Trust(config.get("ca"), config.get("tls_verify", True))
        except ValueError as e:
            raise ConfigError("config.json: %s" % e)
        self.vision = VisionClient(self.device_id, self.client_id, self.trust)
        self.tools = None
        self.server = self.build_server()
        if self.status_view is not None:
            self.server.on_call = self.status_view.on_call
        self.ota = None  # the OTA check (devsvc.otacheck), where config.json has an ota_url
        self.fleet = None
        if config.get("ota_url"):
            from umcpfw.fleet import Fleet  # only with an OTA server (heap)

            self.fleet = Fleet(self)
            self.ota = self.fleet.check
        # The xiaozhi link runs where there is a server to reach: an OTA server, or a url
        # and token; the MCP endpoint links where config.json names endpoints. At least one.
        self.xiaozhi = self.ota is not None
        if self.ota is None:
            try:
                self.transport()
                self.xiaozhi = True
            except ValueError as e:
                # A config without a server is refused at once, unless it names MCP
                # endpoints, or the board has a radio and no Wi-Fi yet (its setup page asks
                # for the server too).
                fresh = self.board.wlan is not None and not self.wifi_credentials()[0]
                if not config.get("mcp_endpoint") and not fresh:
                    raise ConfigError("%s, or an mcp_endpoint" % e)
        endpoint = None
        if config.get("mcp_endpoint"):  # its code only then (heap), before the heap is measured
            from mcplink import endpoint
        # Everything the session keeps is built: what is free now bounds incoming messages.
        self.max_message = config.get("max_message") or max_message_for(free_heap())
        self.server.max_message = self.max_message  # announced in initialize
        self.link = None  # built in run(), once the OTA check said where to connect
        # Other ways clients reach the same server, run beside the link: objects with
        # async run() (serves until cancelled or stop()) and async stop().
        self.services = []
        self.hostname = None  # the board's network name, set for the MCP endpoint
        if config.get("mcp_http") is not None:
            self.services.append(self.build_mcp_http(config["mcp_http"]))
        # One MCP endpoint link per URL (a service), each its own client of the server.
        self.endpoints = []
        if endpoint is not None:
            try:
                self.endpoints = endpoint.configured(config, self.server, self.device_id, "umcp/%s (%s)"
                                                     % (VERSION, self.board.name), self.trust,
                                                     self.max_message)
            except ValueError as e:  # its words mask the token
                raise ConfigError("config.json: %s" % e)
            self.services.extend(self.endpoints)
            self.tools.endpoints = self.endpoints  # get_system_info reports them
        self._tasks = []  # the services' tasks and the board's upkeep
        self.stopped = False
        self._reboot_task = None
        self._wifi_task = None
        self._ota_task = None
        self.wifi_setup = None  # the access point and its page, while that mode runs

    def build_board(self):
        """The board config.json names, with its parts; ConfigError names what is wrong (an
        unknown board, a part entry, a pin)."""
        name = self.config["board"]
        try:
            module = boards.load(name)
        except ImportError as e:
            raise ConfigError('config.json: board "%s": %s' % (name, e))
        try:
            return module.create(self.config, self.settings)
        except ValueError as e:  # its parts (a bad entry, a pin the port refused)
            raise ConfigError(str(e))

    def mac_address(self):
        """Device-Id: the Wi-Fi MAC on a board, the simulated machine id on the host."""
        if self.board.wlan is not None:
            return format_mac(self.board.wlan.config("mac"))
        import machine

        return format_mac(machine.unique_id())

    def build_server(self):
        # The application's own server, not a module-wide one: running the application
        # again in the same interpreter (the REPL after Ctrl-C) starts from nothing.
        server = McpServer(self.board.name, VERSION)
        if self.config.get("max_payload"):
            server.page_limit = self.config["max_payload"]
        server.on_vision(self.vision.configure)
        self.tools = CommonTools(server, self.board, self.settings, self.vision, VERSION,
                                 self.reboot, self.trust)
        self.tools.register()
        self.board.register_tools(server)
        self.tools.resources = DeviceResources(server, self.tools, self.board, self.log_ring)
        self.tools.resources.register()
        self.add_maker_module(server)
        return server

    def add_maker_module(self, server, name=MAKER_MODULE):
        """The maker's module (/app.py or /app/): register(server, board) adds its tools and
        resources. An error in it, at import or in register(), is logged with its traceback,
        what it added is taken away again, and the firmware runs without it. Returns whether
        it was added."""
        try:
            module = __import__(name)
        except ImportError as e:
            if _missing(e, name):
                return False  # none on this board
            log_exception("%s.py could not be imported; running without it" % name, e)
            return False
        except Exception as e:  # a SyntaxError, or what its top level raised
            log_exception("%s.py could not be imported; running without it" % name, e)
            return False
        register = getattr(module, "register", None)
        if not callable(register):
            log.error("%s.py has no register(server, board); running without it", name)
            return False
        added = _Added(server)
        try:
            register(added, self.board)
        except Exception as e:
            log_exception("%s.py's register() failed; running without it" % name, e)
            added.take_away()
            return False
        log.info("%s.py added its tools", name)
        return True

    # -- MCP over HTTP on the board (config.json's mcp_http)

    def build_mcp_http(self, options):
        """The board's own MCP endpoint (mcplink.http), imported only when configured: a
        board without it pays no heap for its code. Sets the network host name first (mDNS
        answers it as <hostname>.local once Wi-Fi connects)."""
        if not isinstance(options, dict):
            raise ConfigError('config.json: "mcp_http" must be an object like {"port": 80, "token": "..."}')
        token = options.get("token")
        if not isinstance(token, str) or not token:
            raise ConfigError('config.json: "mcp_http" needs a "token" that clients send as '
                              '"Authorization: Bearer <token>"')
        port = options.get("port", 80)
        if not isinstance(port, int) or not 0 < port < 65536:
            raise ConfigError('config.json: "mcp_http" port must be 1..65535, not %r' % (port,))
        hostname = options.get("hostname") or hostname_for(self.device_id)
        if not valid_hostname(hostname):
            raise ConfigError('config.json: "mcp_http" hostname %r: 1-32 letters, digits and '
                              '"-" (not first or last)' % (hostname,))
        self.hostname = hostname
        set_hostname(hostname)
        from mcplink.http import McpHttp  # only with mcp_http (heap)

        wlan = self.board.wlan
        service = McpHttp(self.server, token, port, options.get("bind", "0.0.0.0"),
                          max_message=self.max_message,
                          max_requests=options.get("max_requests", 4),
                          max_sessions=options.get("max_sessions", 4), hostname=hostname,
                          address=None if wlan is None else (lambda: wlan.ifconfig()[0]),
                          origins=options.get("origins") or ())
        self.tools.mcp_url = "http://%s.local%s/mcp" % (hostname, "" if port == 80 else ":%d" % port)
        return service

    # -- where to connect

    def transport(self):
        """{"websocket": {url, token}} or {"mqtt": {...}}: what the OTA server gave last
        (saved), else config.json's url and token, else a provisioned server_url/token."""
        config = self.config
        if self.ota is not None:
            saved = self.ota.saved_transport()
            if saved:
                return saved
        url = config.get("url") or self.settings.get("server_url")
        token = config.get("token") or self.settings.get("token")
        if url and token:
            return {"websocket": {"url": url, "token": token}}
        if self.ota is not None:
            raise ValueError("the OTA server at %s gave no websocket or mqtt settings yet"
                             % config["ota_url"])
        raise ValueError("config.json needs ota_url, or the server's url and token")

    def build_link(self):
        """The link for transport(); the application only uses run(), stop(), connected."""
        config = self.config
        transport = self.transport()
        options = {"ca": self.trust, "max_message": self.max_message,
                   "on_system": self.on_system, "on_alert": self.on_alert}
        for key in _LINK_OPTIONS:
            if key in config:
                options[key] = config[key]
        if "mqtt" in transport:
            from xiaozhi.mqtt_link import MqttLink  # imported only when used (heap)

            for key in _MQTT_OPTIONS:
                if key in config:
                    options[key] = config[key]
            return MqttLink(self.server, transport["mqtt"], self.device_id, self.client_id,
                            **options)
        from xiaozhi.link import XiaozhiLink

        websocket = transport["websocket"]
        for key in _WEBSOCKET_OPTIONS:
            if key in config:
                options[key] = config[key]
        if isinstance(websocket.get("version"), int) and "protocol_version" not in config:
            options["protocol_version"] = websocket["version"]
        return XiaozhiLink(self.server, websocket["url"], websocket.get("token") or "",
                           self.device_id, self.client_id, **options)

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
            await self.stop()  # clean closes tell the backend and the endpoints we are going
        except Exception as e:
            log_exception("closing the links", e)
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
            from umcpfw import wifi

            ssid, password = self.wifi_credentials()
            if not await wifi.bring_up(self, wlan, ssid, password):
                return  # the Wi-Fi setup ran, and the board restarts
            wifi.set_clock()  # certificate dates need it
            self._wifi_task = asyncio.create_task(wifi.keep_connected(wlan, ssid, password))
        # Settings, board, tools and network are up: this image boots well.
        try:
            _mark_valid()
        except Exception as e:
            log_exception("marking the firmware valid", e)
        log.info("%s %s as %s, client %s; messages up to %d bytes; %d MCP endpoint(s)",
                 self.board.name, VERSION, self.device_id, self.client_id, self.max_message,
                 len(self.endpoints))
        for service in self.services:
            self._tasks.append(asyncio.create_task(_serve(service)))
        self._tasks.append(asyncio.create_task(_upkeep(self.board, self.server)))
        if not self.xiaozhi:
            # MCP endpoints only: their links are services, serving on tasks of their own.
            while True:
                await asyncio.sleep(3600)
        if self.fleet is not None:
            await self.fleet.first_check()
            self._ota_task = asyncio.create_task(self.fleet.periodic())
        while not self.stopped:
            # The link reconnects by itself; this guards against a bug escaping it, and
            # starts a new link when the OTA check brought other server settings.
            try:
                self.link = self.build_link()
            except ValueError as e:
                log.error("cannot connect: %s", e)
                await asyncio.sleep(_LINK_RESTART_S)
                if self.fleet is not None:
                    await self.fleet.first_check()
                continue
            try:
                await self.link.run()
            except Exception as e:
                log_exception("link stopped", e)
            await asyncio.sleep(_LINK_RESTART_S)


def hostname_for(device_id):
    """The default network name: umcp- and the last 6 hex digits of the MAC
    (aa:bb:cc:dd:ee:ff -> umcp-ddeeff), or the device id made a name."""
    digits = "".join(c for c in device_id.lower() if c in "0123456789abcdef")
    if len(digits) == 12 and len(device_id) in (12, 17):
        return "umcp-" + digits[-6:]
    name = "".join(c if c.isalpha() or c.isdigit() else "-" for c in device_id.lower())
    return (name.strip("-")[:32] or "umcp").strip("-")


def valid_hostname(name):
    """A DNS label of at most 32 characters (MicroPython's limit): letters, digits, '-'."""
    if not isinstance(name, str) or not 1 <= len(name) <= 32 or name[0] == "-" or name[-1] == "-":
        return False
    for c in name:
        if not (c == "-" or ("a" <= c.lower() <= "z") or ("0" <= c <= "9")):
            return False
    return True


def set_hostname(name):
    """network.hostname(name) where the port has it: DHCP and mDNS take it when Wi-Fi
    connects, which is later (MicroPython applies it at connection)."""
    try:
        import network

        network.hostname(name)
    except (ImportError, AttributeError, OSError, ValueError) as e:
        log.warning("host name %s not set: %r", name, e)


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


class _Added:
    """The server as the maker's register() sees it: what it adds is noted, so that a
    register() that fails can have it taken away again. Everything else is the server's."""

    def __init__(self, server):
        self._server = server
        self._tools = []
        self._resources = []
        self._templates = []

    def __getattr__(self, name):
        return getattr(self._server, name)

    def add_tool(self, *args, **hints):
        tool = self._server.add_tool(*args, **hints)
        self._tools.append(tool.name)
        return tool

    def add_user_only_tool(self, *args, **hints):
        tool = self._server.add_user_only_tool(*args, **hints)
        self._tools.append(tool.name)
        return tool

    def add_resource(self, *args, **options):
        resource = self._server.add_resource(*args, **options)
        self._resources.append(resource.uri)
        return resource

    def add_resource_template(self, *args, **options):
        template = self._server.add_resource_template(*args, **options)
        self._templates.append(template.uri_template)
        return template

    def take_away(self):
        for name in self._tools:
            self._server.remove_tool(name)
        for uri in self._resources:
            self._server.remove_resource(uri)
        for template in self._templates:
            self._server.remove_resource_template(template)


async def _upkeep(board, server):
    """The board's run() (its sensors), logged rather than lost if it ends with an error."""
    try:
        await board.run(server)
    except Exception as e:
        log_exception("board upkeep stopped", e)


def _missing(error, name):
    """Whether an ImportError says `name` itself is not there (not something it imports)."""
    if getattr(error, "name", None) is not None:  # CPython's ModuleNotFoundError
        return error.name == name
    return str(error) in ("no module named '%s'" % name, "No module named '%s'" % name)


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
