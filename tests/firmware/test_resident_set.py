"""The lean core's rule, checked where it holds (MicroPython, which forgets modules; CPython
keeps them all): once a board is connected and has served its calls, only the steady
state's modules are loaded. A relay, a DHT22 and a button on the generic board, over the
xiaozhi link: the session (initialize, tools/list, a call of each part's tool and of the
status) leaves exactly the resident set docs/DESIGN.md names ("The heap"); the boot's, the
connection's, the listing's and the rare tools' modules are gone again. And the names the
session interned stay below NAMES_MAX: a name is heap for good, and MicroPython's pools
double as they fill, so the next pool would cost several KB at once."""

import ast
import json
import os
import re

import pytest

from tests.support import ROOT
from tests.support.endpointharness import EndpointServer
from tests.support.firmwareharness import TOKEN, Backend, Sim, VisionServer, device_session, run
from tests.support.otacheckserver import OtaCheckServer

pytestmark = pytest.mark.timeout(90)

DEVICE_PACKAGES = ("umcp", "unet", "xiaozhi", "mcplink", "umcpfw", "devsvc", "drivers", "parts",
                   "boards")
# docs/DESIGN.md, "The heap": what a connected board keeps, and nothing else.
RESIDENT = {
    "umcp", "umcp.args", "umcp.catalogue", "umcp.compat", "umcp.jsonin", "umcp.result", "umcp.rpc",
    "umcp.server",
    # The maker's module below makes a tool at run time (McpTool, Property): without one, a
    # board whose tools are in its catalogue loads neither.
    "umcp.schema", "umcp.tool",
    "unet", "unet.reconnect", "unet.ws",
    "xiaozhi", "xiaozhi.link",
    "umcpfw", "umcpfw.app", "umcpfw.commontools",
    "devsvc", "devsvc.settings",
    "boards", "boards.generic",
    "parts", "parts.output", "parts.sensor",
}
# The names interned at run time after the session on the venv's unix port: 1,505 in
# November 2026, 1,562 in December with alarms, events, the tool budget and the turn's text
# (their checks and commands; their own code loads only where they are used), 1,581 after
# issue 44's second round (modules split by phase: each path is a name). The measuring
# form (the 32-bit v1.28.0 port with the simulated hardware frozen: make bench's stock
# table) counts 938 for board (a) then (942 before), in 6 pools; the 7th would open at
# name 1,261 and take about 9 KB at once. A name is about 19 bytes of heap for good:
# NAMES_MAX leaves about half a KB of names. A change that needs more raises it here, with
# the stock table's figure in its commit (docs/DESIGN.md, "The heap").
NAMES_MAX = 1600
# Names that only the rare requests' module (umcp.requests: resources/*, server/discover,
# logging/setLevel, notifications/cancelled, unknown methods) defines: interned when it is
# loaded, and for good, so none is among the session's names. (umcp.registry, whose
# methods register tools, is loaded at the start by the maker's module below, and gone with
# the start's code: RESIDENT.)
RARE_NAMES = {"_same_id"}
BOARD = {"board": "generic", "chip": "esp32", "parts": [
    {"type": "relay", "name": "lamp", "pin": 2},
    {"type": "dht", "name": "room", "pin": 27},
    {"type": "button", "name": "door", "pin": 0},
]}
# A maker's module that tells which modules are loaded (a user-only tool: it adds none to
# the model's list).
MODULES_APP = '''import sys

import micropython

from umcp import PropertyList


def register(server, board):
    server.add_user_only_tool("test.modules", "The modules loaded now.", PropertyList([]),
                              lambda args: sorted(sys.modules))
    server.add_user_only_tool("test.names", "The interned names, printed.", PropertyList([]),
                              lambda args: micropython.qstr_info(1))
'''


def modules_app(tmp_path):
    """MODULES_APP as the maker's module, for the simulator's app option."""
    app = tmp_path / "maker" / "app.py"
    app.parent.mkdir()
    app.write_text(MODULES_APP)
    return app


def assert_keeps_only(loaded, resident):
    """`loaded` (sys.modules' names) holds exactly `resident` of the device's packages."""
    device_modules = {name for name in loaded if name.split(".")[0] in DEVICE_PACKAGES}
    assert device_modules == resident, ("loaded besides the resident set: %s; resident and not loaded: %s"
                                        % (sorted(device_modules - resident), sorted(resident - device_modules)))


def test_a_connected_board_keeps_only_the_steady_state(tmp_path):
    app = modules_app(tmp_path)

    async def scenario():
        async with device_session(tmp_path / "state", True, extra_config=BOARD, app=app) as (
                backend, sim, device):
            await device.initialize()
            tools, _ = await device.list_tools()
            assert {"self.lamp.turn_on", "self.room.read", "self.get_device_status"} <= {
                tool["name"] for tool in tools}
            assert (await device.call("self.lamp.turn_on"))["isError"] is False
            assert (await device.call("self.room.read"))["isError"] is False
            assert (await device.call("self.get_device_status"))["isError"] is False
            result = await device.call("test.modules")
            assert (await device.call("test.names"))["isError"] is False
            return json.loads(result["content"][0]["text"]), sim.log_path

    import asyncio

    loaded, log_path = asyncio.run(scenario())
    assert_keeps_only(loaded, RESIDENT)
    with open(log_path) as log:
        text = log.read()
    pools = re.findall(r"qstr pool: n_pool=\d+, n_qstr=(\d+)", text)
    assert pools, "the board printed no qstr pool line"
    assert int(pools[-1]) <= NAMES_MAX, "%s names interned, more than %d" % (pools[-1], NAMES_MAX)
    names = set(re.findall(r"^Q\((.*)\)$", text.rpartition("qstr pool:")[2], re.M))
    assert len(names) > 100, "the board printed no names"
    assert not RARE_NAMES & names, "the session loaded umcp.requests: %s" % sorted(RARE_NAMES & names)


# The same board with part events (config.json's "events"): only each watched part's
# limits stay; the watcher's code (umcpfw.events), loaded for a reading outside them, and
# what a firing loads to speak (umcpfw.speak) are gone again once it was said;
# umcp.notices stays as after any button press (its notifications/message). The board
# without events (above) keeps none of it, nor the config check's events module
# (umcpfw.eventcheck).
EVENTS_RESIDENT = RESIDENT | {"umcp.notices"}


def test_a_board_with_events_keeps_none_of_their_code(tmp_path):
    from tests.firmware.test_alarms import next_frame
    from tools.sim.board import write_inputs

    app = modules_app(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    write_inputs(state, {"levels": {"0": 1}})
    events = [{"part": "door", "on": "press", "say": "someone is at the door"},
              {"part": "room", "on": "above", "value": 28, "say": "it is hot in here"}]

    async def scenario():
        async with device_session(state, True, extra_config=dict(BOARD, events=events), app=app) as (
                backend, sim, device):
            await device.initialize()
            write_inputs(state, {"levels": {"0": 0}})
            _, message = await next_frame(device, "listen")
            assert message["text"] == "[device_call]someone is at the door"
            return await device.call_json("test.modules")

    assert_keeps_only(run(scenario()), EVENTS_RESIDENT)


# The same board at an MCP endpoint alone: the endpoint's link in place of xiaozhi's, and
# the connection's code (unet.conn, unet.wshandshake) gone again once it is connected.
ENDPOINT_RESIDENT = (RESIDENT - {"xiaozhi", "xiaozhi.link"}) | {"mcplink", "mcplink.endpoint"}


def test_a_board_at_an_endpoint_keeps_only_the_steady_state(tmp_path):
    app = modules_app(tmp_path)

    async def scenario():
        endpoint = await EndpointServer().start()
        sim = Sim(None, tmp_path / "state", micropython=True, endpoints=[endpoint.url()], app=app,
                  extra_config=dict(BOARD, mcp_endpoint_tools=["self.", "test."])).start()
        try:
            provider = await endpoint.next_provider()
            await provider.initialize()
            tools, _ = await provider.list_tools()
            assert "self.lamp.turn_on" in {tool["name"] for tool in tools}
            assert (await provider.call("self.lamp.turn_on"))["result"]["isError"] is False
            assert (await provider.call("self.room.read"))["result"]["isError"] is False
            result = (await provider.call("test.modules"))["result"]
        finally:
            assert sim.stop() == 0
            await endpoint.stop()
        return json.loads(result["content"][0]["text"])

    loaded = run(scenario())
    assert_keeps_only(loaded, ENDPOINT_RESIDENT)


# The same board given only an OTA URL, as xiaozhi.me's boards are: the OTA server hands out
# the WebSocket. The check's side (umcpfw.fleet) stays for the hourly checks; the check's
# code and its HTTP client (devsvc.otacheck, unet.http, httpcore, conn) go after each check.
OTA_RESIDENT = RESIDENT | {"umcpfw.fleet"}


def test_a_board_given_an_ota_url_keeps_only_the_steady_state(tmp_path):
    app = modules_app(tmp_path)

    async def scenario():
        backend = await Backend().start()
        try:
            with OtaCheckServer([{"websocket": {"url": backend.url, "token": TOKEN}}]) as ota:
                sim = Sim(None, tmp_path / "state", micropython=True, ota_url=ota.url, app=app,
                          extra_config=dict(BOARD, ota_retry=0.2)).start()
                try:
                    device = await backend.next_device()
                    await device.initialize()
                    assert (await device.call("self.lamp.turn_on"))["isError"] is False
                    result = await device.call("test.modules")
                finally:
                    assert sim.stop() == 0
                assert ota.checks, "the board did not check in"
        finally:
            await backend.stop()
        return json.loads(result["content"][0]["text"])

    loaded = run(scenario())
    assert_keeps_only(loaded, OTA_RESIDENT)


# A board with a camera (the host board): the camera's code and the photo upload's are the
# calls' (umcpfw.vision, its HTTP client, umcp.image for the photo itself), gone after each;
# what lasts is the vision URL and the last photo, on the common tools. The host board's
# drivers and its own module are resident besides the generic board's set.
CAMERA_LOADED_FOR_A_CALL = {"umcpfw.vision", "umcp.image", "unet.http", "unet.httpcore", "unet.conn", "unet.url"}


def test_a_camera_board_keeps_no_camera_code_between_photos(tmp_path):
    app = modules_app(tmp_path)

    async def scenario():
        with VisionServer() as vision:
            async with device_session(tmp_path / "state", True, app=app) as (backend, sim, device):
                await device.initialize({"url": vision.url, "token": "vision-token"})
                loaded = [await device.call_json("test.modules")]
                photo = await device.call("self.camera.take_photo", {"question": "what is it?"})
                assert photo["isError"] is False and VisionServer.ANSWER in photo["content"][0]["text"]
                assert (await device.call("self.camera.get_photo"))["content"][0]["type"] == "image"
                loaded.append(await device.call_json("test.modules"))
                assert len(vision.uploads) == 1
                return loaded

    after_initialize, after_photos = run(scenario())
    assert not CAMERA_LOADED_FOR_A_CALL & set(after_initialize), after_initialize
    assert not CAMERA_LOADED_FOR_A_CALL & set(after_photos), after_photos
    assert "boards.host" in after_photos and after_initialize == after_photos


def top_level_imports(module):
    """The device modules `module` (a name in lib/) imports at its top: what stays on the heap
    with it (an import inside a function loads only when it runs)."""
    path = os.path.join(ROOT, "lib", *module.split("."))
    package = os.path.isdir(path)
    path = os.path.join(path, "__init__.py") if package else path + ".py"
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    here = module if package else module.rpartition(".")[0]
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here.split(".")[:len(here.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            for alias in node.names:  # `from unet import conn`: a module too, where it is one
                name = base + "." + alias.name
                if os.path.exists(os.path.join(ROOT, "lib", *name.split(".")) + ".py"):
                    found.add(name)
    return {name for name in found if name.split(".")[0] in DEVICE_PACKAGES}


# Where the OTA server hands out MQTT (and UDP for audio) instead of the WebSocket: the
# MQTT link's modules in place of the WebSocket client (xiaozhi.link's Link does not load
# unet.ws), and the mqtt block's checks (xiaozhi.mqttsettings) gone once the link is made.
MQTT_RESIDENT = (OTA_RESIDENT - {"unet.ws"}) | {"xiaozhi.mqttlink", "xiaozhi.udp", "unet.mqtt"}


def test_a_board_given_mqtt_by_its_ota_server_keeps_only_the_steady_state(tmp_path, broker):
    from tests.support.mqttharness import MqttBackend

    app = modules_app(tmp_path)
    block = {"endpoint": "127.0.0.1:%d" % broker.port, "client_id": "GID_host@@@aa_bb@@@x",
             "username": "dev", "password": "pw", "publish_topic": "device-server",
             "subscribe_topic": "devices/p2p/aa_bb"}

    async def scenario():
        backend = await MqttBackend(broker.port).start()
        try:
            with OtaCheckServer([{"mqtt": block}]) as ota:
                sim = Sim(None, tmp_path / "state", micropython=True, ota_url=ota.url, app=app,
                          extra_config=dict(BOARD, ota_retry=0.2)).start()
                try:
                    device = await backend.next_device(30)
                    assert device.hello["transport"] == "udp"
                    await device.initialize()
                    assert (await device.call("self.lamp.turn_on"))["isError"] is False
                    assert (await device.call("self.room.read"))["isError"] is False
                    result = await device.call("test.modules")
                finally:
                    assert sim.stop() == 0
        finally:
            await backend.stop()
        return json.loads(result["content"][0]["text"])

    assert_keeps_only(run(scenario()), MQTT_RESIDENT)


@pytest.mark.parametrize("resident", [RESIDENT, ENDPOINT_RESIDENT, OTA_RESIDENT, MQTT_RESIDENT],
                         ids=["xiaozhi", "endpoint", "ota", "mqtt"])
def test_a_resident_module_imports_only_resident_modules_at_its_top(resident):
    # A phase's module imported at a resident module's top stays on the heap with it, even
    # once forgotten: sys.modules (what the tests above read) no longer shows it then.
    strays = dict((module, sorted(top_level_imports(module) - resident)) for module in sorted(resident))
    assert not [module for module in strays if strays[module]], dict(
        (module, names) for module, names in strays.items() if names)


# Alarms (umcpfw.alarms): none of their code on a board without one, even after the tools
# were called; only their task's module while there is an alarm (a restart with one in
# flash starts it at boot, umcpfw.alarmstart gone once it has); gone again once the last
# is removed.
ALARM_RESIDENT = RESIDENT | {"umcpfw.alarms"}


def test_alarms_are_resident_only_while_there_are_some(tmp_path):
    import asyncio

    app = modules_app(tmp_path)

    async def modules(device):
        return set(await device.call_json("test.modules"))

    async def scenario():
        async with device_session(tmp_path / "state", True, extra_config=BOARD, app=app) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.alarms.list") == {"alarms": []}
            assert_keeps_only(await modules(device), RESIDENT)
            alarm = await device.call_json("self.alarms.add", {"in_seconds": 600, "label": "later"})
            assert_keeps_only(await modules(device), ALARM_RESIDENT)
            assert (await device.call("self.reboot"))["isError"] is False
            device = await backend.next_device()
            await device.initialize()
            assert_keeps_only(await modules(device), ALARM_RESIDENT)
            assert await device.call_json("self.alarms.remove", {"id": alarm["id"]}) == {"removed": alarm["id"]}
            for _ in range(50):  # the alarms' task ends at its next step, and its module goes
                loaded = await modules(device)
                if "umcpfw.alarms" not in loaded:
                    break
                await asyncio.sleep(0.1)
            assert_keeps_only(loaded, RESIDENT)

    run(scenario())
