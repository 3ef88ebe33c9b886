"""Part events from config.json (umcpfw.events) end to end: the firmware on the simulator,
on CPython and inside MicroPython, its inputs from the simulated input file (a button's
level, a DHT22's air), and a scripted xiaozhi backend on loopback reading the
listen/detect frames the board sends of its own accord (what xiaozhi-esp32-server reads:
tests/firmware/test_alarms.py's assert_detect) and the MCP notifications."""

import asyncio
import json

import pytest

from tests.firmware.test_alarms import assert_detect, next_frame
from tests.support.firmwareharness import RUNTIMES, WAIT_S, device_session, run
from tools.sim.board import write_inputs

pytestmark = pytest.mark.timeout(120)

CONFIG = {"board": "generic", "parts": [
    {"type": "button", "name": "door", "pin": 0},
    {"type": "dht", "name": "room", "pin": 27, "interval_ms": 2000},
], "events": [
    {"part": "door", "on": "press", "say": "someone is at the door"},
    {"part": "door", "on": "release", "ask": "the door bell was let go: who is it?"},
    {"part": "room", "on": "above", "value": 28, "say": "it is hot in here", "every": 3},
    {"part": "door", "on": "long_press", "say": "someone is leaning on the bell"},
    {"part": "room", "on": "below", "value": 30, "field": "humidity", "ask": "the air is dry"},
]}


async def until_updated(device, uri):
    """The texts of the listen frames the board sends until the next resources/updated of
    `uri` (a fresh reading of that part); other notifications kept in device.notifications."""
    texts = []
    while True:
        frame = await asyncio.wait_for(device.ws.recv(), WAIT_S)
        message = json.loads(frame)
        if message["type"] == "listen":
            texts.append(message["text"])
            continue
        payload = message["payload"]
        if payload.get("method") == "notifications/resources/updated" and payload["params"]["uri"] == uri:
            return texts
        if "method" in payload:
            device.notifications.append(payload)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_button_and_a_dht22_crossing_28_c_speak_once_each(tmp_path, micropython):
    inputs = {"levels": {"0": 1}, "dht": {"27": [22.0, 40.0]}}  # the button up (active low)
    write_inputs(tmp_path, inputs)

    def air(celsius, humidity=40.0):
        write_inputs(tmp_path, dict(inputs, dht={"27": [celsius, humidity]}))

    async def scenario():
        async with device_session(tmp_path, micropython, extra_config=CONFIG) as (backend, sim, device):
            await device.initialize()
            room = "device://parts/room"
            assert (await device.request("resources/subscribe", {"uri": room}))["result"] == {}

            # The button: a press is said as it is, held a second it is a long press, its
            # release a turn for the model.
            write_inputs(tmp_path, dict(inputs, levels={"0": 0}))
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "[device_call]someone is at the door")
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "[device_call]someone is leaning on the bell")
            write_inputs(tmp_path, inputs)
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "the door bell was let go: who is it?")

            # The DHT22 crosses 28 °C: one frame, and none while it stays above.
            air(22.5)
            assert await until_updated(device, room) == []  # a reading below 28 °C: nothing
            air(29.0)
            said = await until_updated(device, room)
            frame, message = await next_frame(device, "listen")
            assert said == [] and message["text"] == "[device_call]it is hot in here"
            assert_detect(frame, message, device.session_id, "[device_call]it is hot in here")
            for celsius in (29.5, 30.5, 31.5):
                air(celsius)
                assert await until_updated(device, room) == [], celsius
            # At 27.5 it is not yet back past the hysteresis (1 °C): above 28 says nothing.
            air(27.5)
            assert await until_updated(device, room) == []
            air(29.0)
            assert await until_updated(device, room) == []
            # Back below 27, then above 28 again (the rate limit, 3 s, long past): again.
            air(26.5)
            assert await until_updated(device, room) == []
            air(28.5)
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "[device_call]it is hot in here")
            # The humidity (its "field") below 30 %: a turn for the model.
            air(28.5, 25.0)
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "the air is dry")

            # MCP clients heard of each, in order (logger "events").
            told = []
            while len(told) < 6:
                told = [n["params"] for n in device.notifications if n["method"] == "notifications/message"
                        and n["params"].get("logger") == "events"]
                if len(told) < 6:
                    device.notifications.append(await device.notification("notifications/message"))
            assert [(t["data"]["event"], t["data"]["on"], t["data"].get("reading")) for t in told] == [
                (0, "press", None), (3, "long_press", None), (1, "release", None), (2, "above", 29.0),
                (2, "above", 28.5), (4, "below", 25.0)]
            assert told[2]["data"]["ask"] is True and told[0]["data"]["text"] == "someone is at the door"
        return sim

    run(scenario(), timeout=110)
