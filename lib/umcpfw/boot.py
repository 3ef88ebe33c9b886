"""The application's start: config.json read (for main.py), the parts built once (log
ring, settings, board, trust, vision, the MCP server and its tools, the maker's module,
the OTA check, the HTTP endpoint's service). Imported by Application for that and dropped
again: none of this code is needed afterwards (the links, the MCP endpoints' made once
this code has gone and the xiaozhi link at each start of the link's task, are
umcpfw.linkconfig's). What only some configs need (the maker's module's register(),
mcp_http's check and service) is umcpfw.bootmore's, loaded only for it; events and stored
alarms load their own modules (umcpfw.events, umcpfw.alarmstart) only where there are some."""

import json

from boards import setup as board_setup
from devsvc.settings import Settings
from umcp import McpServer
from umcp.jsonin import closed
from umcp.compat import OnDemand, add_log_sink, call_then_forget, const, forget_modules
from umcpfw import ConfigError, log, log_exception
from umcpfw.commontools import CommonTools, LogRing
from unet import Trust

# (const(): no names of their own on the heap)
_SETTINGS_FILE = const("settings.json")
_CATALOGUE_FILE = const("tools.cat")  # the tools written on the host (umcp.catalogue)
_ALARMS_FILE = const("alarms.json")  # umcpfw.alarmring's store: alarm code loads only where there is one
# The maker's own module on the board (/app.py, or a package /app/): its register(server,
# board) adds tools and resources after the board's. make deploy APP=path copies it.
_MAKER_MODULE = const("app")
_BOARD_NAME_CHARS = const("abcdefghijklmnopqrstuvwxyz0123456789_")


def start_config(path):
    """The firmware's start (umcpfw.app.load_config): info-level log lines where a logging
    module exists (CPython, micropython-lib), then read_config(path)."""
    try:
        import logging

        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    except ImportError:
        pass
    return read_config(path)


def read_config(path):
    """config.json at `path` as a dict, for firmware/main.py's load_config(), checked
    (umcpfw.configcheck, loaded for it); ConfigError says what is wrong with it. A key the
    firmware does not read is said in one line."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        raise ConfigError("cannot read %s: write one and copy it to the board (make deploy)"
                          % path)
    try:
        config = json.loads(text)
        if isinstance(config, dict) and not closed(text):  # MicroPython 1.24 takes '{"a": 1,'
            raise ValueError("cut short")
    except ValueError as e:
        raise ConfigError("%s is not valid JSON: %s" % (path, e))
    if not isinstance(config, dict):
        raise ConfigError("%s must hold one JSON object" % path)
    if not isinstance(config.get("board"), str):
        raise ConfigError('%s needs "board", the name of a module in boards/ (e.g. "host")'
                          % path)
    for key in call_then_forget("umcpfw.configcheck", "check", config):
        log.warning('%s: unknown key "%s" (not read by this firmware)', path, key)
    return config


def format_mac(raw):
    return ":".join("%02x" % b for b in raw)


def build(app):
    """Everything the Application `app` keeps, from its config: ConfigError when the
    config cannot work. Either way, the modules the start loaded for it are dropped again."""
    try:
        _build(app)
    finally:
        # The tools are made: their registration's, checks' and listing's code goes too
        # (umcp.registry, toolcheck, propcheck, listing, names), and what the start used
        # of umcpfw.linkconfig and boards.setup.
        forget_modules("umcp.registry", "umcp.toolcheck", "umcp.propcheck", "umcp.listing",
                       "umcp.names", "umcpfw.linkconfig", "boards.setup")


def _build(app):
    config = app.config
    catalogue = read_catalogue(app)  # before the board: its parts' entries leave the config
    # The recent log lines, for device://log: from here on (a fixed-size ring).
    app.log_ring = LogRing()
    add_log_sink(app.log_ring.add)
    app.settings = Settings(_SETTINGS_FILE)
    # The board puts the saved volume, brightness and theme back onto its hardware.
    app.board = _board(config, app.settings)
    for part in app.board.parts:
        if part.status:  # a screen's ("status": true)
            add_status_view(app, part)
            break
    app.device_id = config.get("device_id") or _mac_address(app.board)
    app.client_id = app.settings.get("client_id")  # a UUID made once by Settings
    # Whom wss:// and https:// trust: the shipped roots plus config.json's "ca"; TLS goes
    # unverified only with "tls_verify": false (a warning at every connection). A broken
    # "ca" or a tls_verify that is not true/false stops the start here, saying so.
    try:
        app.trust = Trust(config.get("ca"), config.get("tls_verify", True))
    except ValueError as e:
        raise ConfigError("config.json: %s" % e)
    app.server = _build_server(app, catalogue)
    if app.status_view is not None:
        app.server.on_call = app.status_view.on_call
    if config.get("ota_url"):
        from umcpfw.fleet import Fleet  # only with an OTA server (heap)

        try:
            app.ota = Fleet(app)
        except ValueError as e:
            raise ConfigError("config.json: %s" % e)
    # The xiaozhi link runs where there is a server to reach: an OTA server, or a url
    # and token; the MCP endpoint links where config.json names endpoints; the board's own
    # HTTP endpoint with mcp_http. At least one.
    app.xiaozhi = app.ota is not None
    if app.ota is None and not app.serial:  # the serial session needs no server
        from umcpfw import linkconfig  # app.build_link's too: dropped with this module

        try:
            linkconfig.transport(app)
            app.xiaozhi = True
        except ValueError as e:
            # A config without a server is refused at once, unless the board has a radio
            # and no Wi-Fi yet (its setup page asks for the server too).
            fresh = app.board.wlan is not None and not app.wifi_credentials()[0]
            if not fresh and linkconfig.missing(config, (app.settings.get("server_url"),
                                                         app.settings.get("token"))):
                raise ConfigError("%s, or an mcp_endpoint, or mcp_http" % e)
    # The incoming message limit: config.json's, else message_limit() as each session
    # of the link starts (and now, with this module's code on the heap, for the MCP
    # endpoint links, which umcpfw.linkconfig makes once it has gone, and the other
    # transports' initialize).
    app.max_message = config.get("max_message")
    app.server.max_message = app.max_message or app.message_limit()
    if config.get("mcp_http") is not None:
        app.services.append(call_then_forget("umcpfw.bootmore", "mcp_http_service", app, config["mcp_http"]))


def load_board(name):
    """The board module boards.<name> (ImportError: no such board). The package's own
    modules (boards.setup, __init__) are not boards (tools/board/deploy.py's BOARDS_SHARED)."""
    if not name or [c for c in name if c not in _BOARD_NAME_CHARS] or name[0] == "_" or name == "setup":
        raise ImportError("bad board name %r" % (name,))
    return getattr(__import__("boards." + name), name)


def _board(config, settings):
    """The board config.json names, with its parts; ConfigError names what is wrong (an
    unknown board, a part entry, a pin)."""
    name = config["board"]
    try:
        module = load_board(name)
    except ImportError as e:
        raise ConfigError('config.json: board "%s": %s' % (name, e))
    try:
        return module.create(config, settings)
    except ValueError as e:  # its parts (a bad entry, a pin the port refused)
        raise ConfigError(str(e))


def add_status_view(app, part):
    """The status view on the screen `part`. Where the board has no display of its own (the
    generic board), the screen is it: the theme tool switches the panel, which starts in the
    saved theme, else light."""
    from umcpfw.statusview import StatusView  # only there (heap)

    board = app.board
    if board.display is None:
        board.display = part
        board_setup.restore(board, {"theme": app.settings.get("theme") or "light"})
    app.status_view = StatusView(part, app)
    part.on_release = app.status_view.changed


def _mac_address(board):
    """Device-Id: the Wi-Fi MAC on a board, the simulated machine id on the host."""
    if board.wlan is not None:
        return format_mac(board.wlan.config("mac"))
    import machine

    return format_mac(machine.unique_id())


def _build_server(app, catalogue):
    # The application's own server, not a module-wide one: running the application
    # again in the same interpreter (the REPL after Ctrl-C) starts from nothing.
    server = McpServer(app.board.name, app.version)
    if app.config.get("max_payload"):
        server.page_limit = app.config["max_payload"]
    app.tools = tools = CommonTools(server, app.board, app.settings, app.version, app.reboot,
                                    app.device_id, app.client_id, app.trust)
    tools.log_ring = app.log_ring
    tools.app = app
    load_alarms(app)
    if app.board.camera:  # the vision URL: umcpfw.vision's, loaded for it (and each photo)
        server.on_vision(OnDemand("umcpfw.vision", "configure", tools))
    if not install_catalogue(app, server, catalogue):
        tools.register()
        app.board.register_tools(server)
    app.board.serve_parts(server)
    if app.config.get("tools") or app.settings.get("tool_choices"):  # (umcpfw.toolbudget.SETTING)
        call_then_forget("umcpfw.toolbudget", "install_rule", tools, app.config.get("tools"))
    # device://status, system, log, photo: at a client's first resources/* request.
    server.add_resources_later(OnDemand("umcpfw.resources", "register", tools))
    add_maker_module(server, app.board)
    if app.config.get("events"):  # each watched part's limits (umcpfw.events: its code only then)
        call_then_forget("umcpfw.events", "watch", app)
    return server


def load_alarms(app):
    """Where alarms are kept in flash: umcpfw.alarmstart's Start, one of the application's
    services, which starts their task (umcpfw.alarms) once the clock is set. None of their
    code where there is no file."""
    try:
        with open(_ALARMS_FILE) as f:
            alarms = json.loads(f.read())["alarms"]
    except OSError:
        return  # no alarm
    except (ValueError, KeyError, TypeError) as e:
        log.warning("%s unreadable (%s): no alarms", _ALARMS_FILE, e)
        return
    if alarms:
        from umcpfw.alarmstart import Start  # (its module goes once Start has run)

        app.services.append(Start(app))
        forget_modules("umcpfw.alarmstart")


def read_catalogue(app, path=_CATALOGUE_FILE):
    """The header of the catalogue at `path` (umcp.catalogue, written on the host by make
    deploy) where it was written for this firmware, board and parts, else None, said in one
    line: the tools are then built at run time, never from a catalogue written for
    something else. Read before the board is made (its parts' entries then leave the config);
    install_catalogue() checks the board's hardware once it is."""
    config = app.config
    try:
        header = catalogue_header(path)
    except OSError:
        log.info("no %s: tools built at run time (make deploy writes it; it spares the heap)", path)
        return None
    except (ValueError, KeyError, TypeError) as e:
        return _no_catalogue(path, "unreadable (%s)" % e)
    for key, value, other in (("version", app.version, "another firmware version"),
                              ("board", config["board"], "another board"),
                              ("parts", config.get("parts"), "other parts")):
        if header.pop(key, None) != value:
            return _no_catalogue(path, "was written for " + other)
    return header


def catalogue_header(path):
    """The header of the catalogue at `path` (umcp.catalogue: a dict; "start": where its
    records begin), OSError when it cannot be read, ValueError when it is no catalogue of
    umcp.catalogue's FORMAT or its size is not the header's (a copy cut short). (Here, not
    in umcp.catalogue, which stays resident: only the start reads a header.)"""
    from umcp.catalogue import FORMAT

    with open(path, "rb") as f:
        header = json.loads(f.readline())
        if not isinstance(header, dict) or header.get("umcp-tools") != FORMAT:
            raise ValueError("not a tool catalogue of format %d" % FORMAT)
        header["start"] = f.tell()  # the records follow the header's line
        f.seek(0, 2)
        records = header["count"] + header["pages"]
        if f.tell() != header["start"] + records * header["width"] + header["texts"]:
            raise ValueError("not the size its header gives: cut short?")
    return header


def _no_catalogue(path, why):
    log.warning("%s %s: tools built at run time; make deploy writes it again", path, why)
    return None


def install_catalogue(app, server, header, path=_CATALOGUE_FILE):
    """The common, board and parts tools from the catalogue read_catalogue() accepted, where
    the board has the hardware it was written for: True once `server` has them."""
    if header is not None and header.get("features") != app.board.features():
        header = _no_catalogue(path, "was written for other hardware")
    if header is None:
        forget_modules("umcp.catalogue")
        return False
    from umcp.catalogue import Catalogue

    server.catalogue = Catalogue(path, header, app.tools.callback)
    log.info("%s: %d tools", path, header["count"])
    return True


def add_maker_module(server, board, name=_MAKER_MODULE):
    """The maker's module (/app.py or /app/): register(server, board) adds its tools and
    resources (umcpfw.bootmore.register_maker, loaded only where there is one). An error in
    it, at import or in register(), is logged with its traceback, what it added is taken
    away again, and the firmware runs without it. Returns whether it was added."""
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
    return call_then_forget("umcpfw.bootmore", "register_maker", module, server, board, name)


def _missing(error, name):
    """Whether an ImportError says `name` itself is not there (not something it imports)."""
    if getattr(error, "name", None) is not None:  # CPython's ModuleNotFoundError
        return error.name == name
    return str(error) in ("no module named '%s'" % name, "No module named '%s'" % name)
