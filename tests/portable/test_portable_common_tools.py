# The common tools over the simulated host board, without a network: registration follows
# the hardware, calls drive the real drivers (recorded by hwsim) and persist to settings.
# Runs under pytest and inside MicroPython (unix port and WebAssembly).
import asyncio
import gc
import json
import os
import sys

from umcpfw.boot import load_board
import esp32
import hwsim
import machine
from umcpfw.commontools import CommonTools
from devsvc.settings import Settings
from umcp import McpServer
from umcp.compat import OnDemand, join_pieces

SETTINGS_FILE = "test_common_tools_%s.json" % sys.implementation.name
COMMON_VISIBLE = ["self.get_device_status", "self.audio_speaker.set_volume",
                  "self.screen.set_brightness", "self.screen.set_theme",
                  "self.camera.take_photo"]
ALARMS = ["self.alarms.add", "self.alarms.list", "self.alarms.remove"]  # every board's
USER_ONLY = ["self.get_system_info", "self.reboot", "self.upgrade_firmware",
             "self.camera.get_photo", "self.screen.get_info", "self.assets.set_download_url",
             "self.tools.set_enabled"]
ES8311_ADDR = 0x18
DAC_VOLUME = 0x32
BACKLIGHT_PIN = 47


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


class Rig:
    """A fresh host board with the common tools then its own on an McpServer; what the
    server sends is kept in `sent`, and reboot requests in `reboots`."""

    def __init__(self, without=()):
        hwsim.reset()
        _remove(SETTINGS_FILE)
        self.settings = Settings(SETTINGS_FILE)
        self.board = load_board("host").create({}, self.settings)
        for part in without:
            setattr(self.board, part, None)
        self.server = McpServer(name="host", version="9.9.9")
        self.sent = []
        self.reboots = []
        self._arrived = asyncio.Event()
        self._next_id = 0
        self.server.set_sender(self._send)
        tools = CommonTools(self.server, self.board, self.settings, "9.9.9", self.reboots.append,
                            "24:0a:c4:12:34:56", "client-1")
        self.tools = tools
        tools.register()
        self.board.register_tools(self.server)
        self.board.serve_parts(self.server)

    async def _send(self, pieces):
        self.sent.append(json.loads(join_pieces(pieces)))
        self._arrived.set()

    async def names(self):
        """Every tool's name in listing order (one page: the default limit holds them all)."""
        reply = await self.request("tools/list", {"withUserTools": True})
        assert "nextCursor" not in reply["result"]
        return [tool["name"] for tool in reply["result"]["tools"]]

    async def call(self, name, arguments=None):
        """tools/call -> the whole response payload."""
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}})

    async def request(self, method, params):
        self._next_id += 1
        request_id = self._next_id
        await self.server.handle({"jsonrpc": "2.0", "id": request_id, "method": method,
                                  "params": params})
        while True:
            for message in self.sent:
                if message.get("id") == request_id and "method" not in message:
                    return message
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), 5)

    async def notification(self, method):
        """The first `method` notification the server sent that no one took yet."""
        while True:
            for index, message in enumerate(self.sent):
                if message.get("method") == method:
                    return self.sent.pop(index)
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), 5)

    async def result_text(self, name, arguments=None):
        reply = await self.call(name, arguments)
        assert reply["result"]["isError"] is False, reply
        return reply["result"]["content"][0]["text"]

    async def error_text(self, name, arguments=None):
        reply = await self.call(name, arguments)
        if "error" in reply:
            return reply["error"]["message"]
        assert reply["result"]["isError"] is True, reply
        return reply["result"]["content"][0]["text"]

    def close(self):
        _remove(SETTINGS_FILE)


async def test_tools_follow_the_hardware():
    rig = Rig()
    try:
        names = await rig.names()
        # Common tools first (the list's stable head), then the user-only ones, then the board's.
        assert names[:5] == COMMON_VISIBLE
        assert names[5:8] == ALARMS
        assert names[8:15] == USER_ONLY
        assert names[15:] == ["self.led_strip.set_color", "self.led_strip.get_state",
                              "self.host.get_temperature"]
    finally:
        rig.close()
    bare = Rig(without=("speaker", "backlight", "display", "camera"))
    try:
        assert (await bare.names())[:9] == ["self.get_device_status"] + ALARMS + ["self.get_system_info",
                                    "self.reboot", "self.upgrade_firmware",
                                    "self.assets.set_download_url", "self.tools.set_enabled"]
    finally:
        bare.close()


async def test_long_texts_are_listed_from_a_module_loaded_only_to_write_them():
    from umcp import McpTool
    from umcp.listing import entry_bytes, entry_json
    from umcp.tool import ModuleText
    from umcpfw import commonschemas, commonsetup, commontexts

    texts = {}
    for module in (commontexts, commonschemas, commonsetup):  # the visible tools' in setup
        for name in dir(module):
            if name[0] != "_" and isinstance(getattr(module, name), str):
                texts[name] = getattr(module, name)
    commontexts = commonschemas = commonsetup = module = None
    rig = Rig()
    try:
        for era, structured in (("2024-11-05", False), ("2025-06-18", True)):
            await rig.request("initialize", {"protocolVersion": era, "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "1"}})
            reply = await rig.request("tools/list", {"withUserTools": True})
            entries = dict((tool["name"], tool) for tool in reply["result"]["tools"])
            status = entries["self.get_device_status"]
            assert status["description"] == texts["STATUS_DESCRIPTION"]
            assert entries["self.camera.take_photo"]["description"] == texts["PHOTO_DESCRIPTION"]
            assert entries["self.audio_speaker.set_volume"]["description"] == texts["VOLUME_DESCRIPTION"]
            assert entries["self.upgrade_firmware"]["description"] == texts["UPGRADE_DESCRIPTION"]
            if structured:
                assert status["outputSchema"] == json.loads(texts["STATUS_SCHEMA"])
                assert (entries["self.get_system_info"]["outputSchema"]
                        == json.loads(texts["SYSTEM_SCHEMA"]))
                assert (entries["self.screen.get_info"]["outputSchema"]
                        == json.loads(texts["SCREEN_SCHEMA"]))
            else:
                assert "outputSchema" not in status
        if sys.implementation.name == "micropython":  # read, then dropped again
            assert "umcpfw.commontexts" not in sys.modules
            assert "umcpfw.commonschemas" not in sys.modules
    finally:
        rig.close()
    # The tool keeps the reference, not the text; sizes hold with and without the schema.
    description = ModuleText("umcpfw.commontexts", "UPGRADE_DESCRIPTION")
    schema = ModuleText("umcpfw.commonschemas", "STATUS_SCHEMA")
    tool = McpTool("self.status", description, None, lambda args: {}, output_schema=schema)
    assert tool.description is description and tool.output_schema is schema
    plain = McpTool("self.status", texts["UPGRADE_DESCRIPTION"], None, lambda args: {},
                    output_schema=texts["STATUS_SCHEMA"])
    for structured in (True, False):
        assert json.loads(entry_json(tool, False, structured)) == json.loads(entry_json(plain, False, structured))
        assert entry_bytes(tool, structured) == entry_bytes(plain, structured)
        assert entry_bytes(tool, structured) == len(entry_json(tool, False, structured).encode())
    # A schema that is no object's is refused when the tool is built, as a str one is.
    refused = None
    try:
        McpTool("self.bad", "d", None, lambda args: {},
                output_schema=ModuleText("umcpfw.commontexts", "UPGRADE_DESCRIPTION"))
    except ValueError as e:
        refused = str(e)
    assert refused is not None and "self.bad" in refused


async def test_set_volume_writes_the_codec_and_persists():
    rig = Rig()
    try:
        codec = machine.sim_i2c_device(0, ES8311_ADDR)
        restored = codec.written(DAC_VOLUME)[-1]  # the saved (default) volume, 70
        assert await rig.result_text("self.audio_speaker.set_volume", {"volume": 50}) == "true"
        assert rig.board.speaker.volume == 50
        at_50 = codec.written(DAC_VOLUME)[-1]
        assert 0 < at_50 < restored
        assert Settings(SETTINGS_FILE).get("volume") == 50  # read back from the file
        message = await rig.error_text("self.audio_speaker.set_volume", {"volume": 101})
        assert "volume" in message
        assert codec.written(DAC_VOLUME)[-1] == at_50
    finally:
        rig.close()


async def test_brightness_and_theme():
    rig = Rig()
    try:
        assert await rig.result_text("self.screen.set_brightness", {"brightness": 40}) == "true"
        assert machine.sim_pwm(BACKLIGHT_PIN).duty_u16() == 40 * 65535 // 100
        assert await rig.result_text("self.screen.set_theme", {"theme": "dark"}) == "true"
        assert rig.board.display.theme == "dark"
        message = await rig.error_text("self.screen.set_theme", {"theme": "sepia"})
        assert "sepia" in message and "light" in message and "dark" in message
        assert rig.board.display.theme == "dark"
        saved = Settings(SETTINGS_FILE)
        assert (saved.get("brightness"), saved.get("theme")) == (40, "dark")
    finally:
        rig.close()


async def test_device_status_reports_hardware_and_board():
    rig = Rig()
    try:
        await rig.call("self.audio_speaker.set_volume", {"volume": 20})
        status = json.loads(await rig.result_text("self.get_device_status"))
        assert status["audio_speaker"] == {"volume": 20}
        assert status["screen"] == {"brightness": 75, "theme": "light"}
        assert status["network"] == {"type": "host"}
        assert status["board"] == "host"
    finally:
        rig.close()


async def test_take_photo_before_a_vision_url_is_a_clear_error():
    rig = Rig()
    try:
        message = await rig.error_text("self.camera.take_photo", {"question": "what is it?"})
        assert "vision" in message and "initialize" in message
    finally:
        rig.close()


async def test_get_photo_returns_the_camera_jpeg_as_an_image_block():
    import binascii

    import camera

    rig = Rig()
    try:
        reply = await rig.call("self.camera.get_photo")
        block = reply["result"]["content"][0]
        assert reply["result"]["isError"] is False
        assert block["type"] == "image" and block["mimeType"] == "image/jpeg"
        jpeg = binascii.a2b_base64(block["data"].encode())
        assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"
        assert jpeg == bytes(camera.sim_camera().capture())  # what the sensor produced
    finally:
        rig.close()


async def test_upgrade_refuses_a_bad_digest_or_url_before_touching_flash():
    rig = Rig()
    try:
        message = await rig.error_text("self.upgrade_firmware",
                                       {"url": "http://127.0.0.1:9/fw.bin", "sha256": "abc"})
        assert "sha256" in message
        message = await rig.error_text("self.upgrade_firmware",
                                       {"url": "ftp://firmware.example/fw.bin", "sha256": "ab" * 32})
        assert "unsupported URL" in message
        assert esp32.sim_set_boot_calls() == []
        assert esp32.sim_partition("ota_1").writes == []
        assert rig.reboots == []
    finally:
        rig.close()


async def test_urls_with_spaces_or_line_breaks_are_refused_everywhere_before_use():
    rig = Rig()
    try:
        smuggling = "http://127.0.0.1:9/fw.bin HTTP/1.1\r\nX-Evil: 1\r\nX: "
        message = await rig.error_text("self.upgrade_firmware",
                                       {"url": smuggling, "sha256": "ab" * 32})
        assert "space or control character" in message, message
        assert esp32.sim_set_boot_calls() == [] and esp32.sim_partition("ota_1").writes == []
        for url in ("https://assets.example/pack bin", "https://assets.example/p\nX: 1",
                    "ws://assets.example/pack.bin"):
            message = await rig.error_text("self.assets.set_download_url", {"url": url})
            assert "control character" in message or "not an HTTP URL" in message, message
        assert Settings(SETTINGS_FILE).get("asset_url") is None
        # The vision URL arrives in initialize: refused there, and the photo says why.
        rig.server.on_vision(OnDemand("umcpfw.vision", "configure", rig.tools))  # as boot wires it
        await rig.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {
            "vision": {"url": "http://127.0.0.1:9/explain\r\nX-Evil: 1", "token": "t"}}})
        assert rig.tools.vision is None
        message = await rig.error_text("self.camera.take_photo", {"question": "what?"})
        assert "vision URL was refused" in message and "control character" in message, message
        await rig.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {
            "vision": {"url": "http://127.0.0.1:9/explain", "token": "t"}}})  # a good one is taken
        assert rig.tools.vision == ("http://127.0.0.1:9/explain", "t") and rig.tools.vision_refused is None
    finally:
        rig.close()


async def test_upgrade_without_progress_token_answers_at_once_and_logs_a_failure():
    rig = Rig()
    try:
        url = "http://127.0.0.1:9/fw.bin"  # nothing listens there (no sockets on wasm)
        for _ in range(2):  # a failed upgrade leaves the way open for another
            text = await rig.result_text("self.upgrade_firmware",
                                         {"url": url, "sha256": "ab" * 32})
            assert text.startswith("upgrade started") and url in text
            failure = (await rig.notification("notifications/message"))["params"]
            assert failure["level"] == "error", failure
            assert "failed" in failure["data"] and url in failure["data"]
        assert esp32.sim_set_boot_calls() == []
        assert esp32.sim_partition("ota_1").writes == []
        assert rig.reboots == []
    finally:
        rig.close()


async def test_reboot_replies_first_and_leaves_the_reset_to_the_app():
    rig = Rig()
    try:
        assert await rig.result_text("self.reboot") == "true"
        assert rig.reboots == [1000]  # reset after a delay, on the app's own task
    finally:
        rig.close()


async def test_system_and_screen_info():
    rig = Rig()
    try:
        info = json.loads(await rig.result_text("self.get_system_info"))
        assert info["firmware_version"] == "9.9.9"
        assert info["board"] == "host"
        assert info["device_id"] == "24:0a:c4:12:34:56"
        assert info["ota"] == {"running": "ota_0", "boot": "ota_0"}
        name = "MicroPython" if sys.implementation.name == "micropython" else "CPython"
        assert info["runtime"].startswith(name)
        if hasattr(gc, "mem_alloc"):  # MicroPython: the heap's live data and what is free
            assert info["heap_used"] > 0 and info["free_heap"] > 0
        else:
            assert "heap_used" not in info and "free_heap" not in info
        screen = json.loads(await rig.result_text("self.screen.get_info"))
        assert (screen["width"], screen["height"]) == (320, 240)
    finally:
        rig.close()


async def test_assets_download_url_is_stored():
    rig = Rig()
    try:
        url = "https://assets.example/pack.bin"
        assert await rig.result_text("self.assets.set_download_url", {"url": url}) == "true"
        assert Settings(SETTINGS_FILE).get("asset_url") == url
    finally:
        rig.close()


async def test_tool_choices_the_latest_match_decides_and_earlier_ones_it_covers_go():
    rig = Rig()
    try:
        every = await rig.names()
        choose = rig.result_text
        await choose("self.tools.set_enabled", {"name": "self.screen.set_theme", "enabled": False})
        await choose("self.tools.set_enabled", {"name": "self.led_strip.*", "enabled": False})
        await choose("self.tools.set_enabled", {"name": "self.led_strip.get_state", "enabled": True})
        shown = await rig.names()  # (MicroPython: no await inside a comprehension)
        assert [n for n in every if n not in shown] == [
            "self.screen.set_theme", "self.led_strip.set_color"]
        # A wider choice replaces the ones it covers; "*" hides all but the tool itself.
        await choose("self.tools.set_enabled", {"name": "self.led_strip.*", "enabled": True})
        await choose("self.tools.set_enabled", {"name": "*", "enabled": False})
        assert await rig.names() == ["self.tools.set_enabled"]
        assert "unknown tool self.get_device_status" in await rig.error_text("self.get_device_status")
        await choose("self.tools.set_enabled", {"name": "*", "enabled": True})
        assert await rig.names() == every
        assert Settings(SETTINGS_FILE).get("tool_choices") == [["*", True]]
        message = await rig.error_text("self.tools.set_enabled", {"name": "self.*.x", "enabled": True})
        assert message.startswith('name must be a tool name or a prefix ending in "*"')
        for index in range(31):
            await choose("self.tools.set_enabled", {"name": "test.%d" % index, "enabled": False})
        message = await rig.error_text("self.tools.set_enabled", {"name": "test.x", "enabled": False})
        assert message == "more than 32 tool choices: show or hide a wider pattern"
        assert len(Settings(SETTINGS_FILE).get("tool_choices")) == 32
    finally:
        rig.close()
