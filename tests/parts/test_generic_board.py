"""The generic board end to end: its peripherals from config.json's "parts", the simulator
running the unchanged firmware (CPython, MicroPython, and the .mpy files make deploy
copies), a scripted backend calling every part's tools over the real link, and hwsim's
records of what the drivers did (pin levels, PWM duties and pulse widths, the strip's
pixels, the OLED's RAM read back as text). Inputs (a button, an ADC, a sensor that stops
answering) come from the inputs file tools/sim/device.py watches."""

import json

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, RUNTIMES_MPY, Sim, device_session, run
from tests.support.otacheckserver import run_pending_activation
from tools.sim.board import write_inputs
from tools.sim.calls import GENERIC_PARTS

pytestmark = pytest.mark.timeout(120)

# The example parts (tools/sim/generic.json: one of each type but the SPI LCD), a few
# options changed to see them taken: the fan's frequency, a shorter strip, a DHT read
# more often.
CHANGED = {"fan": {"freq": 25000}, "leds": {"count": 4}, "room": {"interval_ms": 2000}}
PARTS = [dict(entry, **CHANGED.get(entry["name"], {})) for entry in GENERIC_PARTS]
ROOM = [entry["name"] for entry in PARTS].index("room")  # the DHT's place in the list
TOOLS = {
    "self.lamp.get_state", "self.lamp.turn_on", "self.lamp.turn_off",
    "self.fan.set_level",
    "self.leds.set_color", "self.leds.set_pixel",
    "self.arm.set_angle",
    "self.beeper.beep",
    "self.light.read",
    "self.room.read",
    "self.water.read",
    "self.battery.get_level",
    "self.panel.show_text", "self.panel.clear",
}
# What the sensors start with: the DHT silent (it came loose), the rest answering.
INPUTS = {"adc": {"34": 16384, "35": 39718}, "dht": {"27": None}, "ds18b20": {"26": 23.4}}


def generic_config(**more):
    config = {"board": "generic", "parts": PARTS}
    config.update(more)
    return config


def error_text(result):
    assert result["isError"] is True, result
    return result["content"][0]["text"]


async def refusal(device, name, arguments):
    """The message of a call the schema refuses (a JSON-RPC error on 2024-11-05)."""
    reply = await device.request("tools/call", {"name": name, "arguments": arguments})
    if "error" in reply:
        return reply["error"]["message"]
    return error_text(reply["result"])


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_every_part_type_through_real_calls(tmp_path, micropython):
    write_inputs(tmp_path, INPUTS)  # before the board boots

    async def scenario():
        async with device_session(tmp_path, micropython, extra_config=generic_config()) as (
                backend, sim, device):
            await device.initialize()
            visible, _ = await device.list_tools()
            names = {tool["name"] for tool in visible}
            assert TOOLS <= names
            # No speaker, screen or camera; the rest are the parts' (a type the examples gained
            # is called by the tables test, tests/portable/test_portable_parts_tables.py) and the
            # common tools every board has.
            parts = {entry["name"] for entry in PARTS}
            common = {"self.get_device_status", "self.alarms.add", "self.alarms.list", "self.alarms.remove"}
            assert [name for name in names - common if name.split(".")[1] not in parts] == []
            described = {tool["name"]: tool for tool in visible}
            assert described["self.lamp.turn_on"]["description"] == "Turn on the desk lamp"
            assert described["self.arm.set_angle"]["inputSchema"]["properties"]["angle"]["maximum"] == 180

            # Outputs: each call, then the record of the pins (read when the boot ends).
            assert await device.call_json("self.lamp.turn_on") is True
            assert await device.call_json("self.lamp.get_state") == {"power": True}
            assert await device.call_json("self.lamp.turn_off") is True
            assert await device.call_json("self.fan.set_level", {"level": 40}) is True
            assert "level" in await refusal(device, "self.fan.set_level", {"level": 101})
            assert await device.call_json("self.leds.set_color", {"red": 255, "green": 0, "blue": 8})
            assert await device.call_json("self.leds.set_pixel", {"index": 3, "red": 0, "green": 9,
                                                                  "blue": 0})
            assert "index" in await refusal(device, "self.leds.set_pixel", {
                "index": 4, "red": 0, "green": 0, "blue": 0})
            assert await device.call_json("self.arm.set_angle", {"angle": 90}) is True
            assert await device.call_json("self.beeper.beep", {"frequency": 440, "duration_ms": 50}) \
                == {"frequency": 440, "duration_ms": 50}
            shown = await device.call_json("self.panel.show_text", {"text": "Hello from umcp, 42 C"})
            assert shown == {"lines": ["Hello from umcp,", "42 C"]}

            # Sensors: the ADC scaled, the battery through its divider, the 1-Wire thermometer.
            light = await device.call_json("self.light.read")
            assert light == {"value": 250.0, "unit": "lux", "raw": 16384}
            battery = await device.call_json("self.battery.get_level")
            assert battery["voltage"] == 4.0 and battery["level"] == 78  # (4.0-3.3)/(4.2-3.3)
            assert await device.call_json("self.water.read") == {"temperature_c": 23.38}  # 1/16 steps
            # The DHT does not answer: an error for the model, the device carries on.
            message = error_text(await device.call("self.room.read"))
            assert "parts[%d] (dht 'room')" % ROOM in message and "did not answer" in message
            sim.set_inputs(dict(INPUTS, dht={"27": [24.5, 51.0]}))
            assert await device.call_json("self.room.read") == {"temperature_c": 24.5, "humidity": 51.0}

            # The button: its state is a resource; a press is counted, and told.
            listed = await device.request("resources/list")
            uris = {r["uri"] for r in listed["result"]["resources"]}
            assert {"device://parts/door", "device://parts/light", "device://parts/room",
                    "device://parts/water", "device://parts/battery"} <= uris
            assert (await device.request("resources/subscribe", {"uri": "device://parts/door"}))["result"] == {}
            sim.set_inputs(dict(INPUTS, dht={"27": [24.5, 51.0]}, levels={"0": 0}))
            updated = await device.notification("notifications/resources/updated")
            assert updated["params"] == {"uri": "device://parts/door"}
            told = await device.notification("notifications/message")
            assert told["params"]["data"] == {"part": "door", "event": "pressed", "presses": 1}
            read = await device.request("resources/read", {"uri": "device://parts/door"})
            assert json.loads(read["result"]["contents"][0]["text"]) == {"pressed": True, "presses": 1}

            status = await device.call_json("self.get_device_status")
            assert status["parts"]["lamp"] == {"power": False}
            assert status["parts"]["fan"] == {"level": 40}
            assert status["parts"]["leds"] == {"leds": 4, "color": None}  # the LEDs differ
            assert status["parts"]["arm"] == {"angle": 90, "pulse_us": 1500}
            assert status["parts"]["door"] == {"pressed": True, "presses": 1}
            assert status["parts"]["room"] == {"temperature_c": 24.5, "humidity": 51.0}
            assert status["battery"] == {"level": 78}
        return sim

    sim = run(scenario(), timeout=90)
    record = sim.records()[-1]["hwsim"]
    assert record["pins"]["2"] == [0, 1, 0]  # off at boot, on, off
    assert record["pwm"]["4"]["freq"] == 25000
    assert record["pwm"]["4"]["duty_u16"] == [0, 40 * 65535 // 100]
    assert record["pwm"]["13"]["duty_ns"] == 1500000  # 90 of 180 degrees: 500 + 1000 us
    assert record["pwm"]["15"]["freqs"] == [440]
    assert record["pwm"]["15"]["duty_u16"] == [0, 32768, 0]  # the tone, then silence
    frames = record["strips"]["5"]
    assert frames[-2] == [[255, 0, 8]] * 4
    assert frames[-1] == [[255, 0, 8]] * 3 + [[0, 9, 0]]
    assert oledtext.lines(record["oleds"]["0:60"], micropython) == ["Hello from umcp,", "42 C"]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_oled_shows_the_activation_code(tmp_path, micropython):
    # The code is shown before the first activation POST.
    sim = run_pending_activation(tmp_path, micropython, generic_config(), code="482915",
                                 activations=1, settle=0, timeout=90)
    shown = oledtext.lines(sim.records()[-1]["hwsim"]["oleds"]["0:60"], micropython)
    assert shown == ["Activation code", "482915", "enter it at", "xiaozhi.me"]


@pytest.mark.parametrize("micropython, parts, line", [
    (False, [{"type": "relay", "name": "lamp", "pin": 34}],
     "config.json parts[0] (relay 'lamp'): pin: GPIO 34 is input-only on the esp32"),
    (True, [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "pwm", "name": "lamp", "pin": 4}],
     "config.json parts[1] (pwm 'lamp'): the name 'lamp' is taken by config.json parts[0] (relay 'lamp')"),
    (False, [{"type": "laser", "name": "x", "pin": 2}],
     "config.json parts[0]: unknown type 'laser'; the types are analog, battery, button"),
    (True, [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "button", "name": "b", "pin": 2}],
     "config.json parts[1] (button 'b'): GPIO 2 is already used by config.json parts[0] (relay 'lamp')"),
    (False, [{"type": "analog", "name": "pot", "pin": 4}],
     "config.json parts[0] (analog 'pot'): pin: GPIO 4 has no ADC the firmware can read on the esp32"),
    (False, [{"type": "servo", "name": "arm", "pin": 13, "angle": 90}],
     "config.json parts[0] (servo 'arm'): unknown option 'angle' (servo takes description, pin, min_us"),
])
def test_a_bad_part_stops_the_start_with_one_line(tmp_path, micropython, parts, line):
    sim = Sim("ws://127.0.0.1:9/xiaozhi/v1/", tmp_path, micropython=micropython,
              extra_config={"board": "generic", "parts": parts}).start()
    assert sim.wait(60) == 1  # the simulator ends with the firmware's status
    with open(sim.log_path) as f:
        log = f.read()
    said = [text for text in log.splitlines() if text.startswith("umcp cannot start:")]
    assert len(said) == 1 and line in said[0], log
    assert "Traceback" not in log
