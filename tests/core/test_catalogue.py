"""Tools as data (umcp.catalogue, written by tools/board/catalogue.py): a server whose
common, board and parts tools come from the catalogue answers every client as the server
that built them at run time does (tools/list in each form, page by page; calls, argument
errors, portable names), and a maker's tools made at run time join them."""

import json
import logging

import hwsim
import pytest

from devsvc.settings import Settings
from tests.support.mcpwire import McpWire
from tools.board import catalogue as host_catalogue
from tools.sim.board import config_for
from umcp import INTEGER, McpServer, Property, PropertyList
from umcp.catalogue import Catalogue
from umcp.paging import MORE_END, MORE_HEAD, PAGE_END
from umcp.rpc import FRAME_OPEN
from umcp.server import TOOLS_OPEN
from umcpfw.boot import catalogue_header, load_board
from umcpfw.commontools import CommonTools

PARTS = [{"type": "relay", "name": "lamp", "pin": 2},
         {"type": "servo", "name": "flap", "pin": 21, "range": 90},
         {"type": "strip", "name": "leds", "pin": 22, "count": 8},
         {"type": "buzzer", "name": "beeper", "pin": 25}]
CONFIG = config_for("host", "ws://127.0.0.1:9/xiaozhi/v1/", "token", parts=PARTS)


def _server(tmp_path, name, catalogue, page_limit=None):
    """The host board with PARTS, its tools from the catalogue or built at run time (its
    pages cut for `page_limit`, or for the server's own)."""
    hwsim.reset()
    hwsim.solder(PARTS)
    settings = Settings(str(tmp_path / ("%s.json" % name)))
    board = load_board("host").create(dict(CONFIG), settings)
    server = McpServer("host", "9")
    tools = CommonTools(server, board, settings, "9", lambda delay: None, "24:0a:c4:12:34:56", "c")
    if catalogue:
        path = str(tmp_path / "tools.cat")
        if page_limit is None:
            host_catalogue.write(CONFIG, path)
        else:
            about, listing, facts = host_catalogue.tool_facts(CONFIG)
            with open(path, "wb") as f:
                f.write(host_catalogue.layout(about, dict(listing, page_limit=page_limit), facts))
        server.catalogue = Catalogue(path, catalogue_header(path), tools.callback)
    else:
        tools.register()
        board.register_tools(server)
    board.serve_parts(server)
    return server


@pytest.fixture
def pair(tmp_path):
    return _server(tmp_path, "built", False), _server(tmp_path, "catalogue", True)


async def _pages(wire, params=None, modern=False):
    """Every tools/list page's result, following the cursors."""
    pages, cursor = [], None
    while True:
        asked = dict(params or {})
        if cursor is not None:
            asked["cursor"] = cursor
        if modern:
            reply = await wire.modern_request("tools/list", asked, id=len(pages) + 10)
        else:
            reply = await wire.request("tools/list", asked, id=len(pages) + 10)
        pages.append(reply["result"])
        cursor = reply["result"].get("nextCursor")
        if cursor is None:
            return pages


async def _transcript(server, version, page_limit, portable):
    wire = McpWire(server)
    server.page_limit = page_limit
    server.default.portable = portable
    seen = [await wire.request("initialize", {"protocolVersion": version, "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "1"}}, id=1)]
    seen.append(await _pages(wire))
    seen.append(await _pages(wire, {"withUserTools": True}))
    seen.append(await _pages(wire, modern=True))
    for number, (name, arguments) in enumerate([
            ("self.lamp.turn_on", {}), ("self.lamp.get_state", None),
            ("self_lamp_turn_off", {}),  # the portable form, on any session
            ("self.flap.set_angle", {"angle": 91}), ("self.flap.set_angle", {"angle": 45.0}),
            ("self.beeper.beep", {}), ("self.leds.set_pixel", {"index": 8, "red": 1, "green": 2, "blue": 3}),
            ("self.leds.set_color", {"red": 1, "green": 2, "blue": 3, "alpha": 4}),
            ("self.audio_speaker.set_volume", {"volume": "loud"}), ("self.audio_speaker.set_volume", {}),
            ("self.screen.set_theme", {"theme": "blue"}), ("self.reboot", "now"),
            ("self.nothing", {}), ("self.led_strip.get_state", {})]):
        params = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        seen.append(await wire.request("tools/call", params, id=100 + number))
    assert not wire.failures
    return seen


@pytest.mark.anyio
@pytest.mark.parametrize("version, page_limit, portable", [
    ("2024-11-05", 8000, False),  # the xiaozhi backend's
    ("2025-06-18", 1500, True),  # output schemas, small pages, portable names (Claude through the bridge)
    ("2025-11-25", 1300, False),  # argument errors as results; a page or two per entry
])
async def test_the_catalogue_answers_as_tools_built_at_run_time(pair, version, page_limit, portable):
    built, catalogued = pair
    assert built.tools and not catalogued.tools and catalogued.catalogue.count == len(built.tools)
    expected = await _transcript(built, version, page_limit, portable)
    assert await _transcript(catalogued, version, page_limit, portable) == expected
    listed = [tool["name"] for page in expected[2] for tool in page["tools"]]
    assert ("self_lamp_turn_on" if portable else "self.lamp.turn_on") in listed
    if page_limit < 8000:
        assert len(expected[2]) > 2  # the cursors were followed


@pytest.mark.anyio
async def test_calls_reach_the_hardware_through_the_catalogue(pair):
    _, server = pair
    wire = McpWire(server)
    await wire.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}})
    reply = await wire.request("tools/call", {"name": "self.audio_speaker.set_volume",
                                              "arguments": {"volume": 35}}, id=2)
    assert reply["result"]["isError"] is False
    status = await wire.request("tools/call", {"name": "self.get_device_status"}, id=3)
    assert status["result"]["structuredContent"]["audio_speaker"]["volume"] == 35
    state = await wire.request("tools/call", {"name": "self.lamp.turn_on"}, id=4)
    assert state["result"]["isError"] is False
    assert (await wire.request("tools/call", {"name": "self.lamp.get_state"}, id=5))["result"][
        "structuredContent"] == {"power": True}


@pytest.mark.anyio
async def test_a_makers_tools_follow_the_catalogues(pair):
    _, server = pair
    count = server.catalogue.count

    def ring(args):
        return "rang %d" % args["times"]

    server.add_tool("maker.bell.ring", "Ring the bell.",
                    PropertyList([Property("times", INTEGER, default=1, minimum=1, maximum=3)]), ring)
    for taken in ("self.lamp.turn_on", "self_lamp_turn_on", "self.reboot"):  # portable clashes too
        with pytest.raises(ValueError, match="already registered"):
            server.add_tool(taken, "Again.", None, ring)
    wire = McpWire(server)
    server.page_limit = 1200
    pages = await _pages(wire, {"withUserTools": True})
    names = [tool["name"] for page in pages for tool in page["tools"]]
    assert len(names) == count + 1 and names[-1] == "maker.bell.ring"
    reply = await wire.request("tools/call", {"name": "maker.bell.ring", "arguments": {"times": 2}}, id=7)
    assert reply["result"]["content"][0]["text"] == "rang 2"


@pytest.mark.anyio
async def test_a_catalogue_tool_removed_is_neither_listed_nor_called(pair):
    _, server = pair
    server.remove_tool("self.reboot")
    with pytest.raises(KeyError):
        server.remove_tool("self.nothing")
    wire = McpWire(server)
    names = [tool["name"] for page in await _pages(wire, {"withUserTools": True}) for tool in page["tools"]]
    assert "self.reboot" not in names and "self.upgrade_firmware" in names
    reply = await wire.request("tools/call", {"name": "self.reboot"}, id=3)
    assert reply["error"]["code"] == -32602 and "unknown tool" in reply["error"]["message"]


@pytest.mark.anyio
async def test_a_tool_called_again_is_not_looked_up_again_unless_removed(pair, monkeypatch):
    # The latest call's tool is kept: the same name again reads no record; another name,
    # or the kept tool removed, does.
    _, server = pair
    looked = []
    find = server.catalogue.find

    def spy(name, f=None):
        looked.append(name)
        return find(name, f)

    monkeypatch.setattr(server.catalogue, "find", spy)
    wire = McpWire(server)
    for number, name in enumerate(["self_lamp_turn_on", "self_lamp_turn_on", "self.lamp.turn_off",
                                   "self.lamp.turn_off", "self_lamp_turn_on"]):
        reply = await wire.request("tools/call", {"name": name}, id=number)
        assert reply["result"]["isError"] is False
    assert looked == ["self_lamp_turn_on", "self.lamp.turn_off", "self_lamp_turn_on"]
    server.remove_tool("self.lamp.turn_on")
    reply = await wire.request("tools/call", {"name": "self_lamp_turn_on"}, id=9)
    assert "unknown tool" in reply["error"]["message"]
    state = await wire.request("tools/call", {"name": "self.lamp.get_state"}, id=10)
    assert json.loads(state["result"]["content"][0]["text"]) == {"power": True}


def test_the_catalogue_says_what_it_was_written_for(tmp_path):
    path = str(tmp_path / "tools.cat")
    host_catalogue.write(CONFIG, path)
    header = catalogue_header(path)
    assert header["board"] == "host" and header["parts"] == PARTS
    assert header["features"] == ["speaker", "backlight", "display", "camera"]
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    records = lines[1:1 + header["count"]]
    assert {len(record) + 1 for record in records} == {header["width"]}  # fixed width
    assert json.loads(records[0])[0] == "self.get_device_status"


def test_a_callback_a_catalogue_cannot_name_is_refused_on_the_host():
    facts = {"name": "self.x", "flags": 0, "plain": '{"name":"self.x","inputSchema":{}}',
             "full": '{"name":"self.x","inputSchema":{}}', "target": ["tools", "x"], "rows": []}
    listing = {"frame_open": FRAME_OPEN, "open": TOOLS_OPEN, "end": PAGE_END, "more_head": MORE_HEAD,
               "more_end": MORE_END, "page_limit": 8000}
    assert host_catalogue.layout({"version": "1"}, listing, [facts]).startswith(b'{"umcp-tools":2')
    odd = dict(facts, plain='{"inputSchema":{},"name":"self.x"}')  # not head + rest
    with pytest.raises(host_catalogue.CatalogueError, match="self.x"):
        host_catalogue.layout({"version": "1"}, listing, [odd])


async def _listed(server, version):
    """The pages of tools/list and of tools/list withUserTools, each frame's text."""
    wire = McpWire(server, server.default.overhead)
    await wire.request("initialize", {"protocolVersion": version, "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "1"}}, id=1)
    first = len(wire.frames)
    pages = await _pages(wire) + await _pages(wire, {"withUserTools": True})
    assert not wire.failures
    return pages, wire.frames[first:]


def _spied(server, monkeypatch):
    """Whether each tools/list page of `server` came from its catalogue's page records."""
    served = []
    page = server.catalogue.page

    def spy(*args):
        pieces = page(*args)
        served.append(pieces is not None)
        return pieces

    monkeypatch.setattr(server.catalogue, "page", spy)
    return served


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18"])
async def test_the_pages_written_on_the_host_are_those_paging_cuts(tmp_path, monkeypatch, version):
    # Cut on the host for a page limit of 1500 and its envelope and id: every page is read
    # from the file, and each frame is the one the server that built its tools sends.
    built = _server(tmp_path, "built", False)
    written = _server(tmp_path, "catalogue", True, page_limit=1500)
    served = _spied(written, monkeypatch)
    for server in (built, written):
        server.page_limit = 1500
        server.default.overhead = host_catalogue.PAGE_RESERVE - 2  # the ids have two digits
    expected, frames = await _listed(built, version)
    assert await _listed(written, version) == (expected, frames)
    assert len(expected) > 4 and served == [True] * len(expected)
    assert max(len(frame.encode()) for frame in frames) + host_catalogue.PAGE_RESERVE - 2 <= 1500


@pytest.mark.anyio
async def test_pages_cut_for_another_page_limit_are_cut_by_paging(tmp_path, monkeypatch):
    # Cut on the host for 1500 bytes, served at 8000: the pages come from the tool records.
    built = _server(tmp_path, "built", False)
    written = _server(tmp_path, "catalogue", True, page_limit=1500)
    served = _spied(written, monkeypatch)
    expected = await _listed(built, "2024-11-05")
    assert await _listed(written, "2024-11-05") == expected
    assert len(expected[0]) > 1 and served == [False] * len(expected[0])


@pytest.mark.anyio
@pytest.mark.parametrize("choice, sees", [(["self."], True), (None, False), (["self.lamp.*"], None)])
async def test_a_choice_of_tools_a_page_form_lists_is_read_from_the_file(tmp_path, monkeypatch, choice, sees):
    # An MCP endpoint's choice of tools (mcplink.endpoint.offered_tools): every tool, or all
    # but the user-only ones, is one of the catalogue's page forms (umcpfw.linkconfig finds
    # which) and read from its page records; a narrower choice is cut by umcp.paging. Each
    # frame is the one the server that built its tools sends for the same choice.
    from mcplink.endpoint import offered_tools
    from umcpfw.linkconfig import catalogue_form

    built = _server(tmp_path, "built", False)
    written = _server(tmp_path, "catalogue", True, page_limit=1500)
    served = _spied(written, monkeypatch)
    offered = offered_tools(choice)
    assert catalogue_form(written.catalogue, offered) is sees
    assert catalogue_form(None, offered) is None
    written.default.sees = sees
    for server in (built, written):
        server.page_limit = 1500
        server.default.overhead = host_catalogue.PAGE_RESERVE - 2  # the ids have two digits
        server.default.offered = offered
    expected, frames = await _listed(built, "2024-11-05")
    assert await _listed(written, "2024-11-05") == (expected, frames)
    names = [tool["name"] for page in expected for tool in page["tools"]]
    assert ("self.get_system_info" in names) is (sees is True)
    assert served == ([True] * len(expected) if sees is not None else [])


def _app(config=CONFIG, version=None):
    from types import SimpleNamespace

    from umcpfw.app import VERSION

    return SimpleNamespace(config=dict(config), version=version or VERSION)


@pytest.mark.parametrize("change, said", [
    (dict(version="0.0.1"), "was written for another firmware version"),  # an older deploy's
    (dict(config=dict(CONFIG, board="generic")), "was written for another board"),
    (dict(config=dict(CONFIG, parts=PARTS[:2])), "was written for other parts"),
])
def test_a_catalogue_written_for_something_else_is_named_and_not_used(tmp_path, caplog, change, said):
    from umcpfw.boot import read_catalogue

    path = str(tmp_path / "tools.cat")
    host_catalogue.write(CONFIG, path)
    assert read_catalogue(_app(), path) is not None
    assert read_catalogue(_app(**change), path) is None
    assert "tools.cat %s: tools built at run time" % said in caplog.text


def test_a_missing_or_broken_catalogue_is_named_and_not_used(tmp_path, caplog):
    from umcpfw.boot import install_catalogue, read_catalogue

    caplog.set_level(logging.INFO)
    path = str(tmp_path / "tools.cat")
    assert read_catalogue(_app(), path) is None
    assert "no %s: tools built at run time" % path in caplog.text
    host_catalogue.write(CONFIG, path)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])  # a copy cut short
    assert read_catalogue(_app(), path) is None
    assert "unreadable (not the size its header gives" in caplog.text
    with open(path, "wb") as f:
        f.write(b"garbage\n")
    assert read_catalogue(_app(), path) is None
    # The board's hardware is checked once it is made: a camera that did not answer.
    with open(path, "wb") as f:
        f.write(data)
    server = _server(tmp_path, "hardware", False)
    app = _app()
    app.board = load_board("host").create(dict(CONFIG), Settings(str(tmp_path / "s.json")))
    app.board.camera = None
    header = read_catalogue(app, path)
    assert header is not None and not install_catalogue(app, McpServer(), header, path)
    assert "was written for other hardware" in caplog.text and server.catalogue is None


def test_a_firmware_that_cannot_reach_its_tools_is_named_on_the_host(monkeypatch):
    with pytest.raises(host_catalogue.CatalogueError, match="ConfigError: config.json needs"):
        host_catalogue.tool_facts({"board": "generic", "chip": "esp32", "wifi": {"ssid": "home"}})
    monkeypatch.setattr(host_catalogue, "START_TIMEOUT_S", 0.01)
    with pytest.raises(host_catalogue.CatalogueError, match="did not reach its tools within"):
        host_catalogue.tool_facts(CONFIG)
