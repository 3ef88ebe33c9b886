"""Wi-Fi set up on the board: with no usable Wi-Fi (none configured, the configured one not
reachable for config.json's wifi_setup_after seconds at the start, or lost for
wifi_lost_setup_after seconds later on, or self.system.reconfigure_wifi),
the board opens its own access point (WPA2, a fresh password printed in the log and on
the status screen) and serves a setup page (unet.httpd): network, password and the
server (the OTA URL, or the server's WebSocket URL and its token; a field left empty
keeps what config.json has). A good answer is saved into config.json atomically and the
board restarts into it; a bad one (a board left with no server among them) is answered
with the page and what to fix, and config.json stays as it was. Meanwhile a configured network
(not reachable or lost) is tried again, and the board restarts onto it once it is back;
not when the owner asked for the setup to change it. Imported only when the mode is
entered. The page is plain HTML with a little inline CSS: no script, nothing from
outside (there is no internet on the access point); every value shown back is escaped,
and the password and the token are never shown back."""

import asyncio
import json
import os

from devsvc.settings import write_atomically
from umcp.compat import call_then_forget, get_logger
from umcpfw import WIFI_CHECK_S
from unet.httpd import HttpServer

CONFIG_FILE = "config.json"
SCAN_KEPT = 12  # networks offered from the scan
URL_MAX = 256
_RESTART_MS = 1000  # the answer reaches the browser before the reset
_KEY_CHARS = "abcdefghjkmnpqrstuvwxyz23456789"  # nothing to confuse on a small screen
TOKEN_MAX = 256
# A token is a secret as the password is: never shown back (the "password" kind).
_FIELDS = (("ssid", "Network (SSID)", "text"), ("password", "Password", "password"),
           ("ota_url", "OTA URL", "url"), ("url", "or the server's WebSocket URL", "url"),
           ("token", "and its token", "password"))

_log = get_logger("wifisetup")


def access_point_key():
    """A fresh WPA2 password: 8 characters easy to read off a screen."""
    raw = os.urandom(8) if hasattr(os, "urandom") else None
    if raw is None:
        import random

        raw = bytes(random.getrandbits(8) for _ in range(8))
    return "".join(_KEY_CHARS[b % len(_KEY_CHARS)] for b in raw)


def escape(text):
    """Text made safe inside HTML, attributes included."""
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"),
                      ("'", "&#39;")):
        if raw in text:
            text = text.replace(raw, safe)
    return text


def parse_form(body):
    """application/x-www-form-urlencoded bytes -> {name: text}; ValueError for what is
    not (bad escapes, text that is not UTF-8)."""
    form = {}
    for pair in bytes(body).split(b"&"):
        if not pair:
            continue
        name, _, value = pair.partition(b"=")
        form[_unquote(name)] = _unquote(value)
    return form


def _unquote(raw):
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == 0x2B:  # '+'
            out.append(0x20)
        elif c == 0x25:  # '%'
            if i + 2 >= n:
                raise ValueError("a %-escape is cut off")
            out.append(int(raw[i + 1:i + 3].decode(), 16))
            i += 2
        else:
            out.append(c)
        i += 1
    return bytes(out).decode("utf-8")  # UnicodeError is a ValueError


def check(form):
    """The settings a form gives -> (wifi, ota_url, url, token); ValueError with every
    problem, one per line, in words for the person at the page. Whether the board then
    has a server to reach is save()'s to say (it knows config.json)."""
    problems = []
    ssid = form.get("ssid", "")
    password = form.get("password", "")
    if not 1 <= len(ssid.encode()) <= 32:
        problems.append("Network: 1 to 32 bytes, got %d" % len(ssid.encode()))
    elif _control(ssid):
        problems.append("Network: no control characters")
    size = len(password.encode())
    if size and not 8 <= size <= 63:
        problems.append("Password: empty (an open network) or 8 to 63 characters, got %d" % size)
    elif [c for c in password if not " " <= c <= "~"]:
        problems.append("Password: printable ASCII characters only")
    ota_url = form.get("ota_url", "").strip()
    url = form.get("url", "").strip()
    for value, label, schemes in ((ota_url, "OTA URL", ("http://", "https://")),
                                  (url, "Server URL", ("ws://", "wss://"))):
        if value and (not [s for s in schemes if value.startswith(s) and len(value) > len(s)]
                      or len(value) > URL_MAX or _control(value) or " " in value):
            problems.append("%s: %s... of at most %d characters" % (
                label, " or ".join(schemes), URL_MAX))
    token = form.get("token", "").strip()
    if len(token) > TOKEN_MAX or [c for c in token if not "!" <= c <= "~"]:
        problems.append("Token: at most %d printable ASCII characters, no spaces" % TOKEN_MAX)
    if problems:
        raise ValueError("\n".join(problems))
    return {"ssid": ssid, "password": password}, ota_url, url, token


def _control(text):
    for c in text:
        if c < " " or c == "\x7f":
            return True
    return False


def save(wifi, ota_url, url, token="", path=CONFIG_FILE, provisioned=(None, None)):
    """config.json with the new Wi-Fi (and the URLs and token where given), written
    atomically: the rest of the file is kept as it is. ValueError, and nothing written,
    when the board would then have no server to reach (it could not start: the page is
    the only way to fix that without a computer). `provisioned`: the server URL and token
    an OTA server gave earlier (the settings'), which count as config.json's do."""
    with open(path) as f:
        config = json.loads(f.read())
    config["wifi"] = wifi
    for key, value in (("ota_url", ota_url), ("url", url), ("token", token)):
        if value:
            config[key] = value
    missing = call_then_forget("umcpfw.linkconfig", "missing", config, provisioned)
    if missing == "token":
        raise ValueError("Token: the server's WebSocket URL needs its token")
    if missing:
        raise ValueError("Server: give the OTA URL, or the server's WebSocket URL and its token")
    write_atomically(path, config)


class WifiSetup:
    """The access point and its page; run() serves until the answer is saved, then resets.
    `sta`: the station interface (for a scan); `show(ssid, key, address)`: the status
    screen's hook, or None."""

    def __init__(self, sta, name, reason, port=80, bind="0.0.0.0", show=None,
                 config_path=CONFIG_FILE, provisioned=(None, None)):
        self.sta = sta
        self.name = name
        self.reason = reason
        self.port = port
        self.bind = bind
        self.show = show
        self.config_path = config_path
        self.provisioned = provisioned  # the server URL and token an OTA server gave (save())
        self.key = access_point_key()
        self.ap = None
        self.address = None
        self.networks = ()
        self.saved = None  # the ssid saved, once the form was accepted
        self.httpd = HttpServer(self.answer, max_body=1024, max_requests=2, max_connections=4)

    def start_access_point(self):
        import network

        self.networks = self.scan()
        ap = network.WLAN(network.AP_IF)
        ap.active(True)
        ap.config(ssid=self.name, key=self.key)  # the key first: WPA2 needs one
        security = getattr(network.WLAN, "SEC_WPA2", getattr(network, "AUTH_WPA2_PSK", 3))
        ap.config(security=security)
        self.ap = ap
        self.address = ap.ifconfig()[0]
        _log.warning("Wi-Fi setup (%s): join %s with password %s, then open http://%s/",
                     self.reason, self.name, self.key, self.address)
        if self.show is not None:
            self.show(self.name, self.key, self.address)

    def scan(self):
        """The networks around, strongest first, names only (the page offers them)."""
        try:
            self.sta.active(True)
            found = self.sta.scan()
        except OSError as e:
            _log.warning("Wi-Fi scan: %r", e)
            return ()
        found = sorted(found, key=lambda net: -net[3])
        names = []
        for net in found:
            try:
                name = bytes(net[0]).decode("utf-8")
            except ValueError:
                continue
            if name and name not in names:
                names.append(name)
            if len(names) == SCAN_KEPT:
                break
        return names

    async def run(self):
        self.start_access_point()
        await self.httpd.run(self.bind, self.port)

    async def stop(self):
        await self.httpd.stop()

    async def answer(self, request, response):
        if request.path != "/":
            await response.send(404, (("Content-Type", "text/plain"),), "not found")
            return
        if request.method == "GET":
            await self.page(response, 200)
            return
        if request.method != "POST":
            await response.send(405, (("Allow", "GET, POST"),))
            return
        try:
            form = parse_form(request.body or b"")
        except ValueError:
            await self.page(response, 400, {}, "The form could not be read; send it again.")
            return
        request.body = None
        try:
            wifi, ota_url, url, token = check(form)
            save(wifi, ota_url, url, token, self.config_path, self.provisioned)
        except (ValueError, OSError) as e:
            _log.warning("Wi-Fi setup: refused: %s", str(e).replace("\n", "; "))
            await self.page(response, 400, form, str(e))
            return
        self.saved = wifi["ssid"]
        _log.warning("Wi-Fi setup: saved network %s; restarting", wifi["ssid"])
        await response.send(200, _HTML, (
            _HEAD, "<h1>Saved</h1><p>The board restarts and joins <b>", escape(wifi["ssid"]),
            "</b>.</p>", _TAIL))
        asyncio.create_task(_restart())

    async def page(self, response, status, form=None, problem=None):
        """The form: what was typed kept (escaped; the password never), the problem said."""
        form = form or {}
        pieces = [_HEAD, "<h1>", escape(self.name), " Wi-Fi setup</h1>"]
        if problem:
            pieces.append('<p class="err" id="problem">')
            for line in problem.split("\n"):
                pieces.extend((escape(line), "<br>"))
            pieces.append("</p>")
        pieces.append("<p>The server: the OTA URL, or the server's WebSocket URL and its token. "
                      "A field left empty keeps what config.json has.</p>")
        pieces.append('<form method="post" action="/">')
        for name, label, kind in _FIELDS:
            value = "" if kind == "password" else escape(form.get(name, ""))
            pieces.extend(('<label>', label, '<input name="', name, '" type="', kind,
                           '" value="', value, '"'))
            if name == "ssid":
                pieces.append(' list="nets" required maxlength="32"')
            pieces.append("></label>")
        if self.networks:
            pieces.append('<datalist id="nets">')
            for net in self.networks:
                pieces.extend(('<option value="', escape(net), '">'))
            pieces.append("</datalist>")
        pieces.append('<button type="submit">Save and restart</button></form>')
        pieces.append(_TAIL)
        await response.send(status, _HTML, pieces)


async def serve(app, reason, connect):
    """The application's Wi-Fi setup mode: the access point and its page, until the answer
    is saved and the board restarts. The status screen (if any) shows the access point.
    `reason`: why, in words, or the settings' flag (umcpfw.station.bring_up): True, asked
    for by self.system.reconfigure_wifi; "lost": the network lost while running
    (umcpfw.station.recover). The configured network, if any, is tried again meanwhile
    (keep_trying(), with `connect`: umcpfw.station's, which loads this module): after a
    power cut the router may come back later than the board gave up on it; not when the
    owner asked for the setup (to change the network, which may well be up)."""
    from umcpfw.mcphttp import hostname_for

    ssid, password = app.wifi_credentials()
    retried = ssid and reason is not True
    if reason is True:
        reason = "asked for by self.system.reconfigure_wifi"
    elif reason == "lost" and ssid:
        reason = "Wi-Fi %s lost" % ssid
    view = app.status_view

    def show(ssid, key, address):
        if view is not None:
            view.setup = (ssid, key, address)
            view.changed()

    config = app.config
    settings = app.settings
    app.wifi_setup = WifiSetup(app.board.wlan, hostname_for(app.device_id), reason,
                               config.get("wifi_setup_port", 80),
                               config.get("wifi_setup_bind", "0.0.0.0"), show,
                               provisioned=(settings.get("server_url"), settings.get("token")))
    app.services.append(app.wifi_setup)
    retry = None
    if retried:
        retry = asyncio.create_task(keep_trying(app, connect, ssid, password,
                                                config.get("wifi_check_interval", WIFI_CHECK_S)))
    try:
        await app.wifi_setup.run()
    finally:
        if retry is not None:
            retry.cancel()


async def keep_trying(app, connect, ssid, password, pause):
    """The configured network tried again with `connect` (umcpfw.station.connect) while
    the page waits (the ESP32 runs its access point and its station together; each try
    scans the channels, which can hold the page up for a few seconds); once it is back the
    board restarts onto it, as after an answer (config.json as it was)."""
    await asyncio.sleep(pause)  # after the access point's start and its scan
    await connect(app.board.wlan, ssid, password, pause_s=pause)
    _log.warning("Wi-Fi %s is back before the setup was answered: restarting", ssid)
    app.reboot(0)


async def _restart():
    await asyncio.sleep(_RESTART_MS / 1000)
    import machine

    machine.reset()


_HTML = (("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"))
_HEAD = ('<!DOCTYPE html><html><head><meta charset="utf-8">'
         '<meta name="viewport" content="width=device-width,initial-scale=1">'
         '<title>Wi-Fi setup</title><style>body{font-family:sans-serif;max-width:26em;'
         'margin:1em auto;padding:0 1em}label{display:block;margin:.8em 0}input{display:block;'
         'width:100%;padding:.4em;box-sizing:border-box}button{padding:.6em 1em}'
         '.err{color:#b00}</style></head><body>')
_TAIL = "</body></html>"
