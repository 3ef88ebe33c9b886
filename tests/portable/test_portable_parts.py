# config.json's parts on the simulated hardware, in process: every entry problem named in
# one line, each type's tools and records, sensors that stop answering, the upkeep that
# tells subscribers. Runs under pytest and inside MicroPython (unix port, WebAssembly).
import asyncio

import dht
import hwsim
import machine
import neopixel
import onewire
from boards import Board
from boards.setup import add_parts
from umcpfw.boot import load_board as load
from parts import PartError
from parts.sensor import serve
from parts.check import entries
from portable_support import ToolClient, generic_board, until


def _problem(parts, chip="esp32", taken=None, names=()):
    try:
        entries(parts, chip, taken, names)
    except PartError as e:
        return str(e)
    return None


def test_each_bad_entry_is_named_in_one_line():
    cases = [
        ("x", 'config.json "parts" must be a list of objects, got \'x\''),
        ([3], "config.json parts[0] must be an object like"),
        ([{"type": "laser", "name": "a", "pin": 2}], "config.json parts[0]: unknown type 'laser'"),
        ([{"type": "relay", "pin": 2}], 'config.json parts[0] (relay): "name" is missing'),
        ([{"type": "relay", "name": "Lamp", "pin": 2}], "name 'Lamp' must be 1 to 24 of a-z"),
        ([{"type": "relay", "name": "screen", "pin": 2}], "the name 'screen' is taken by the firmware's own tools"),
        ([{"type": "relay", "name": "lamp"}], "config.json parts[0] (relay 'lamp'): 'pin' is missing"),
        ([{"type": "relay", "name": "lamp", "pin": "2"}], "pin must be a GPIO number, got '2'"),
        ([{"type": "relay", "name": "lamp", "pin": 20}], "GPIO 20 does not exist on the esp32 (its GPIOs: 0-19, 21-23, 25-27, 32-39)"),
        ([{"type": "relay", "name": "lamp", "pin": 6}], "GPIO 6 is wired to the flash chip on the esp32"),
        ([{"type": "relay", "name": "lamp", "pin": 1}], "GPIO 1 is the serial console's TX"),
        ([{"type": "relay", "name": "lamp", "pin": 36}], "GPIO 36 is input-only on the esp32: an output needs a pin that can drive"),
        ([{"type": "dht", "name": "t", "pin": 36}], "GPIO 36 is input-only on the esp32: a bus line needs a pin that can drive"),
        ([{"type": "analog", "name": "a", "pin": 25}], "GPIO 25 has no ADC the firmware can read on the esp32 (ADC2 stops while Wi-Fi is on): use one of GPIO 32-39"),
        ([{"type": "relay", "name": "lamp", "pin": 2, "invert": 1}], "invert must be true or false, got 1"),
        ([{"type": "pwm", "name": "fan", "pin": 2, "freq": 0}], "freq must be 1..100000, got 0"),
        ([{"type": "pwm", "name": "fan", "pin": 2, "freq": 2.5}], "freq must be a whole number, got 2.5"),
        ([{"type": "servo", "name": "arm", "pin": 2, "min_us": 2500}], "min_us (2500) must be below max_us (2500)"),
        ([{"type": "button", "name": "b", "pin": 0, "pull": "sideways"}], "pull must be one of 'up', 'down', 'none', got 'sideways'"),
        ([{"type": "battery", "name": "b", "pin": 35, "empty_v": 5}], "empty_v (5.0) must be below full_v (4.2)"),
        ([{"type": "relay", "name": "lamp", "pin": 2, "description": "a\nb"}], "description must be text of 1 to 60 characters on one line"),
        ([{"type": "relay", "name": "a", "pin": 2}, {"type": "relay", "name": "b", "pin": 2}],
         "config.json parts[1] (relay 'b'): GPIO 2 is already used by config.json parts[0] (relay 'a')"),
        ([{"type": "relay", "name": "a", "pin": 2}, {"type": "pwm", "name": "a", "pin": 4}],
         "config.json parts[1] (pwm 'a'): the name 'a' is taken by config.json parts[0] (relay 'a')"),
        ([{"type": "oled", "name": "o", "sda": 21, "scl": 21}], "sda and scl must be two pins, both are GPIO 21"),
        ([{"type": "oled", "name": "o", "sda": 21, "scl": 22}, {"type": "oled", "name": "p", "sda": 18, "scl": 19}],
         "config.json parts[1] (oled 'p'): I2C 0 is on GPIO 21/22 for config.json parts[0] (oled 'o')"),
        ([{"type": "oled", "name": "o", "sda": 21, "scl": 22}, {"type": "oled", "name": "p", "sda": 21, "scl": 22}],
         "config.json parts[1] (oled 'p'): address 0x3C on I2C 0 is taken by config.json parts[0] (oled 'o')"),
    ]
    for parts, line in cases:
        said = _problem(parts)
        assert said is not None and line in said, (parts, said)
        assert "\n" not in said


def test_pins_follow_the_chip_and_the_board():
    assert "GPIO 33 is wired" not in (_problem([{"type": "relay", "name": "l", "pin": 33}], "esp32s3") or "")
    assert "GPIO 27 is wired to the flash/PSRAM on the esp32s3" in _problem(
        [{"type": "relay", "name": "l", "pin": 27}], "esp32s3")
    assert "use one of GPIO 1-10" in _problem([{"type": "analog", "name": "a", "pin": 34}], "esp32s3")
    assert _problem([{"type": "relay", "name": "l", "pin": 48}], "esp32s3") is None
    assert "GPIO 18 is the USB D- line on the esp32c3" in _problem(
        [{"type": "relay", "name": "l", "pin": 18}], "esp32c3")
    assert "is not one of esp32, esp32c3, esp32c6, esp32s2, esp32s3" in _problem([], "esp8266")
    assert "GPIO 27 is wired to the flash/PSRAM on the esp32s2" in _problem(
        [{"type": "relay", "name": "l", "pin": 27}], "esp32s2")
    assert "GPIO 46 is input-only on the esp32s2" in _problem([{"type": "relay", "name": "l", "pin": 46}], "esp32s2")
    assert "GPIO 22 does not exist on the esp32s2" in _problem([{"type": "relay", "name": "l", "pin": 22}], "esp32s2")
    assert "GPIO 26 is wired to the flash chip on the esp32c6" in _problem(
        [{"type": "relay", "name": "l", "pin": 26}], "esp32c6")
    assert "GPIO 12 is the USB D- line on the esp32c6" in _problem(
        [{"type": "relay", "name": "l", "pin": 12}], "esp32c6")
    assert "use one of GPIO 0-6" in _problem([{"type": "analog", "name": "a", "pin": 7}], "esp32c6")
    assert _problem([{"type": "relay", "name": "l", "pin": 20}], "esp32c6") is None
    assert "GPIO 47 is already used by the board's backlight" in _problem(
        [{"type": "relay", "name": "l", "pin": 47}], "esp32s3", {47: "backlight"})
    assert "taken by the firmware's own tools (self.led_strip.*)" in _problem(
        [{"type": "relay", "name": "led_strip", "pin": 2}], names=("led_strip",))
    # Two OLEDs share one bus at two addresses; a relay may not take a bus line.
    assert _problem([{"type": "oled", "name": "o", "sda": 21, "scl": 22},
                     {"type": "oled", "name": "p", "sda": 21, "scl": 22, "addr": 61}]) is None
    assert "GPIO 22 is already used by config.json parts[0] (oled 'o')" in _problem(
        [{"type": "oled", "name": "o", "sda": 21, "scl": 22}, {"type": "relay", "name": "r", "pin": 22}])


def test_the_running_chip_is_read_from_the_board_name_of_every_micropython():
    from parts.check import chip_of

    assert chip_of("Generic ESP32S3 module with ESP32S3") == "esp32s3"  # MicroPython 1.24-1.27
    assert chip_of("Generic ESP32S3 module with ESP32-S3") == "esp32s3"  # 1.28 on
    assert chip_of("Generic ESP32 module with ESP32") == "esp32"
    assert chip_of("ESP32C6 module with ESP32-C6") == "esp32c6"
    assert chip_of("linux [GCC 12.2.0] version") is None  # off a board: config.json's "chip"
    assert chip_of("JS with Emscripten") is None  # the WebAssembly build


def test_a_chip_the_tables_do_not_know_leaves_its_pins_to_the_port():
    # A newer chip (an ESP32-P4, say) running the firmware: no table's rules applied to it
    # (the port's machine.Pin refuses a pin the chip lacks), the rest still checked.
    from parts import check

    running = check.running_chip
    check.running_chip = lambda: "esp32p4"
    try:
        made = check.entries([{"type": "relay", "name": "lamp", "pin": 40},
                              {"type": "analog", "name": "a", "pin": 16}])
        assert [entry["pin"] for entry in made] == [40, 16]
        try:
            check.entries([{"type": "relay", "name": "a", "pin": 40}, {"type": "relay", "name": "b", "pin": 40}])
            assert False, "a pin taken twice"
        except ValueError as e:
            assert "GPIO 40 is already used by config.json parts[0] (relay 'a')" in str(e)
    finally:
        check.running_chip = running


def test_a_board_refuses_a_bad_entry_and_keeps_its_own_pins():
    hwsim.reset()
    try:
        load("esp32s3_cam").create({"parts": [{"type": "relay", "name": "lamp", "pin": 2}]}, None)
        assert False, "a second lamp was taken"
    except ValueError as e:
        assert "the name 'lamp' is taken by the board's own part" in str(e)
    try:
        load("esp32_s3_box3").create({"parts": [{"type": "relay", "name": "r", "pin": 46}]}, None)
        assert False, "the amplifier's pin was taken"
    except ValueError as e:
        assert "GPIO 46 is already used by the board's pa" in str(e)
    board = load("esp32_s3_box3").create({"parts": [{"type": "button", "name": "boot", "pin": 0}]}, None)
    assert board.part("boot").kind == "button"  # the BOOT button is free for a part


def test_only_a_board_module_loads_as_a_board():
    for name in ("setup", "nope", "../x", ""):
        try:
            load(name)
            assert False, "%r loaded as a board" % name
        except ImportError as e:
            assert "board" in str(e) or "nope" in str(e)


async def test_outputs_drive_the_pins():
    board = generic_board([{"type": "relay", "name": "lamp", "pin": 2, "invert": True},
                    {"type": "pwm", "name": "fan", "pin": 4, "invert": True},
                    {"type": "strip", "name": "leds", "pin": 5, "count": 3},
                    {"type": "servo", "name": "arm", "pin": 13, "range": 90},
                    {"type": "buzzer", "name": "beeper", "pin": 15}])
    client = ToolClient(board)
    assert machine.sim_pin(2).history == [1]  # an inverted relay is off at the high level
    assert machine.sim_pwm(4).duty_u16() == 65535  # an inverted PWM is off at full duty
    assert await client.call("self.lamp.turn_on") is True
    assert machine.sim_pin(2).value() == 0
    assert await client.call("self.lamp.get_state") == {"power": True}
    assert await client.call("self.fan.set_level", {"level": 25}) is True
    assert machine.sim_pwm(4).duty_u16() == 65535 - 25 * 65535 // 100
    assert await client.call("self.leds.set_color", {"red": 1, "green": 2, "blue": 3}) is True
    assert neopixel.sim_strip(5).frames[-1] == [(1, 2, 3)] * 3
    assert await client.call("self.arm.set_angle", {"angle": 90}) is True
    assert machine.sim_pwm(13).duty_ns() == 2500 * 1000  # the range's end: max_us
    assert machine.sim_pwm(13).freq() == 50
    assert await client.call("self.beeper.beep", {"frequency": 880, "duration_ms": 10})
    assert machine.sim_pwm(15).duty_u16() == 32768 and machine.sim_pwm(15).freq() == 880
    await until(lambda: machine.sim_pwm(15).duty_u16() == 0)  # its own task ends the tone
    assert board.status()["parts"]["arm"] == {"angle": 90, "pulse_us": 2500}


async def test_a_relay_s_state_is_structured_for_clients_that_take_it():
    client = ToolClient(generic_board([{"type": "relay", "name": "lamp", "pin": 2}]))
    await client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}})
    listing = (await client.request("tools/list"))["result"]["tools"]
    entry = [tool for tool in listing if tool["name"] == "self.lamp.get_state"][0]
    assert entry["outputSchema"]["properties"]["power"] == {"type": "boolean"}
    assert "outputSchema" not in [tool for tool in listing if tool["name"] == "self.lamp.turn_on"][0]
    reply = await client.request("tools/call", {"name": "self.lamp.get_state", "arguments": {}})
    assert reply["result"]["structuredContent"] == {"power": False}


async def test_sensors_read_and_tell_of_changes():
    board = generic_board([{"type": "button", "name": "door", "pin": 0, "debounce_ms": 0},
                    {"type": "analog", "name": "soil", "pin": 32, "min": 0, "max": 10, "unit": "V",
                     "interval_ms": 100},
                    {"type": "battery", "name": "cell", "pin": 33, "interval_ms": 1000},
                    {"type": "dht", "name": "room", "pin": 27, "model": "dht11"}])
    client = ToolClient(board)
    await client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}})
    for uri in ("device://parts/door", "device://parts/soil"):
        assert (await client.request("resources/subscribe", {"uri": uri}))["result"] == {}
    machine.sim_set_adc(32, 65535)
    machine.sim_set_adc(33, 37500)  # 1.888 V on the pin: 3.78 V at the battery
    upkeep = asyncio.create_task(serve(board.parts, client.server))
    try:
        await until(lambda: board.part("soil").reading is not None)
        assert await client.call("self.soil.read") == {"value": 10.0, "unit": "V", "raw": 65535}
        assert await client.call("self.cell.get_level") == {"level": 53, "voltage": 3.78}
        assert await client.call("self.room.read") == {"temperature_c": 21, "humidity": 45}
        before = len(client.notifications("notifications/resources/updated"))
        machine.sim_set_level(0, 0)  # pressed: the interrupt counts it
        machine.sim_set_level(0, 1)
        door = {"uri": "device://parts/door"}
        await until(lambda: client.notifications("notifications/message")
                     and door in client.notifications("notifications/resources/updated")[before:])
        assert client.notifications("notifications/message")[0]["data"] == {
            "part": "door", "event": "pressed", "presses": 1}
        assert board.status()["parts"]["door"] == {"pressed": False, "presses": 1}
        soil = {"uri": "device://parts/soil"}
        told = len([n for n in client.notifications("notifications/resources/updated") if n == soil])
        machine.sim_set_adc(32, 0)
        await until(lambda: len([n for n in client.notifications("notifications/resources/updated")
                                  if n == soil]) > told)
        assert board.part("soil").reading["raw"] == 0
    finally:
        upkeep.cancel()
    assert board.status()["battery"] == {"level": 53}


async def test_a_sensor_that_stops_answering_gives_an_error_not_a_crash():
    board = generic_board([{"type": "dht", "name": "room", "pin": 27},
                    {"type": "ds18b20", "name": "water", "pin": 26},
                    {"type": "ds18b20", "name": "lost", "pin": 25}])
    onewire.sim_devices(25)[:] = []  # nothing on that bus
    client = ToolClient(board)
    dht.sim_fail(27)
    said = await client.call("self.room.read")
    assert said.startswith("error: config.json parts[0] (dht 'room') did not answer: OSError 110")
    dht.sim_fail(27, False)
    assert await client.call("self.room.read") == {"temperature_c": 21.0, "humidity": 45.0}
    assert await client.call("self.water.read") == {"temperature_c": 21.5}
    onewire.sim_devices(26)[0].failing = True
    board.part("water").last = None  # the reading is due again
    assert "did not answer" in await client.call("self.water.read")
    assert board.status()["parts"]["water"] == {
        "error": "config.json parts[1] (ds18b20 'water') did not answer: OneWireError"}
    assert await client.call("self.lost.read") == \
        "error: config.json parts[2] (ds18b20 'lost') did not answer: OSError no DS18B20 found"


async def test_the_oled_shows_text_and_survives_a_loose_wire():
    parts = [{"type": "oled", "name": "panel", "sda": 21, "scl": 22, "height": 32}]
    hwsim.reset()  # nothing soldered: the panel does not answer at boot
    board = Board("generic")
    add_parts(board, {"parts": parts})
    client = ToolClient(board)
    said = await client.call("self.panel.show_text", {"text": "hi"})
    assert said.startswith("error: config.json parts[0] (oled 'panel') does not answer")
    assert said.endswith("check its wiring")
    hwsim.solder(parts)  # wired up now
    shown = await client.call("self.panel.show_text", {"text": "Temperature: 21.5 C\nsecond line\nthird\nfourth\nfifth"})
    assert shown == {"lines": ["Temperature:", "21.5 C", "second line", "third"]}  # 4 rows of 32
    oled = machine.sim_i2c_device(0, 0x3C)
    assert oled.on and oled.data_bytes == 2 * 128 * 4  # cleared at set-up, then the text
    assert sum(oled.ram[:128]) > 0  # "Temperature:" drawn on the first page
    assert await client.call("self.panel.clear") is True
    assert sum(oled.ram[:512]) == 0
    board.show_activation_code("123456", "")
    assert board.part("panel").lines == ["Activation code", "123456", ""][:4]


async def test_a_screen_shows_what_its_font_has_and_what_fits():
    parts = [{"type": "oled", "name": "panel", "sda": 21, "scl": 22, "height": 32}]
    hwsim.reset()
    hwsim.solder(parts)
    board = Board("generic")
    add_parts(board, {"parts": parts})
    client = ToolClient(board)
    # framebuf's font is printable ASCII: anything else is a '?'; 16 columns, 4 rows
    shown = await client.call("self.panel.show_text", {"text": "caf\u00e9 \u2603\ttab\n1\n2\n3\n4"})
    assert shown == {"lines": ["caf? ??tab", "1", "2", "3"]}
    assert board.part("panel").fit(["\u00e9" * 20, "ok"]) == ["?" * 16, "ok"]


def test_the_entries_leave_the_config_once_the_parts_are_made():
    parts = [{"type": "relay", "name": "lamp", "pin": 2, "description": "the desk lamp"}]
    hwsim.reset()
    hwsim.solder(parts)
    config = {"board": "generic", "parts": parts}
    board = Board("generic")
    add_parts(board, config)
    assert config["parts"] is None and config["board"] == "generic"
    lamp = board.part("lamp")
    assert (lamp.label, lamp.where) == ("desk lamp", "config.json parts[0] (relay 'lamp')")
    assert lamp.switch(True) and machine.sim_pin(2).value() == 1


def test_add_parts_loads_only_the_types_named():
    import sys

    hwsim.reset()
    for name in ("parts.sensor", "parts.oled", "parts.check"):
        sys.modules.pop(name, None)
    board = Board("generic")
    add_parts(board, {"parts": [{"type": "relay", "name": "lamp", "pin": 2}]})
    made = board.parts
    assert [part.name for part in made] == ["lamp"]
    assert "parts.sensor" not in sys.modules and "parts.oled" not in sys.modules
    micropython = sys.implementation.name == "micropython"  # CPython keeps its modules
    # The boot's check leaves the heap again, and so does the making of the parts.
    assert ("parts.check" in sys.modules, "parts.setup" in sys.modules) == (not micropython,) * 2
    client = ToolClient(board)  # registers the tools: parts.toolset, for that only
    assert ("parts.toolset" in sys.modules) == (not micropython)
    assert [tool.name for tool in client.server.tools] == [
        "self.lamp.get_state", "self.lamp.turn_on", "self.lamp.turn_off"]


class _App:
    """What umcpfw.boot's add_status_view and the status view read of the application."""

    def __init__(self, board, settings):
        self.board = board
        self.settings = settings
        self.ota = self.link = None


def test_the_generic_board_s_status_screen_is_its_display_in_the_saved_theme():
    from umcpfw.boot import add_status_view

    entry = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}
    # Nothing saved: light (the panel lit, inverted by the controller); a saved theme; a
    # saved theme no display takes: logged, the panel stays as it came up (dark).
    for saved, theme in ((None, "light"), ("dark", "dark"), ("blue", "dark")):
        board = generic_board([dict(entry)])
        app = _App(board, {} if saved is None else {"theme": saved})
        add_status_view(app, board.part("panel"))
        panel = machine.sim_i2c_device(0, 0x3C)
        assert board.display is board.part("panel"), saved
        assert (board.display.theme, panel.inverted) == (theme, theme == "light"), saved
        assert board.display.info() == {"width": 128, "height": 64, "type": "SSD1306 OLED",
                                        "monochrome": True, "theme": theme}
        assert board.part("panel").on_release == app.status_view.changed
    # self.screen.set_theme switches the panel at once, and takes only light and dark.
    board.display.set_theme("light")
    assert panel.inverted is True and board.display.theme == "light"
    try:
        board.display.set_theme("blue")
        raise AssertionError("a theme no display takes was set")
    except ValueError as e:
        assert "theme must be 'light' or 'dark'" in str(e)
    assert board.display.theme == "light"
    # A board with a display of its own keeps it: the view puts its theme on the screen.
    board = generic_board([dict(entry)])
    from drivers.display import Display

    board.display = Display(128, 64, "its own", "dark")
    app = _App(board, {})
    add_status_view(app, board.part("panel"))
    assert board.display.panel == "its own" and board.part("panel").theme == "dark"
    app.status_view.draw()
    assert board.part("panel").lines == ["Connecting"]


async def test_a_silent_panel_keeps_its_theme_until_it_answers():
    parts = [{"type": "oled", "name": "panel", "sda": 21, "scl": 22}]
    hwsim.reset()  # nothing soldered: the panel does not answer
    board = Board("generic")
    add_parts(board, {"parts": parts})
    oled = board.part("panel")
    try:
        oled.set_theme("light")
        raise AssertionError("a silent panel took the theme")
    except RuntimeError as e:
        assert "does not answer" in str(e)
    assert oled.theme == "light"  # kept: set with the panel's next set-up
    hwsim.solder(parts)
    oled.show(["back"])
    panel = machine.sim_i2c_device(0, 0x3C)
    assert panel.inverted is True and oled.lines == ["back"]
