"""Alarms and timers (self.alarms.*, umcpfw.alarms) end to end: the firmware on the
simulator, on CPython and inside MicroPython, a scripted xiaozhi backend on loopback
calling the tools and reading what the board sends of its own accord: the listen/detect
frame the xiaozhi-esp32-server reads, the MCP notifications, the buzzer's tone and the
status screen's text (hwsim's records), the store kept across a restart."""

import asyncio
import json
import os

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, WAIT_S, device_session, run

pytestmark = pytest.mark.timeout(120)

# The generic board with a buzzer and a status screen: what an alarm reaches on a board.
PARTS = [
    {"type": "buzzer", "name": "beeper", "pin": 15},
    {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True},
]
ALARMS_FILE = "alarms.json"  # umcpfw.alarms' store, in the board's folder (its flash)


def generic():
    return {"board": "generic", "parts": PARTS}


async def next_frame(device, kind, timeout=WAIT_S):
    """The next frame from the board whose "type" is `kind`, parsed; the MCP envelopes on
    the way are kept in device.notifications (notifications) or dropped (responses)."""
    while True:
        frame = await asyncio.wait_for(device.ws.recv(), timeout)
        message = json.loads(frame)
        if message["type"] == kind:
            return frame, message
        assert message["type"] == "mcp", message
        if "method" in message["payload"]:
            device.notifications.append(message["payload"])


async def add(device, **arguments):
    return await device.call_json("self.alarms.add", arguments)


async def refused(device, arguments):
    """The -32602 message of an add the board refuses (the session is 2024-11-05's)."""
    reply = await device.request("tools/call", {"name": "self.alarms.add", "arguments": arguments})
    assert reply["error"]["code"] == -32602, reply
    return reply["error"]["message"]


def assert_detect(frame, message, session_id, text):
    """What xiaozhi-esp32-server reads of the frame (core/handle/textHandle.py hands it to
    textMessageProcessor.py, which json.loads it and picks the handler by msg_json
    .get("type"), line 25; core/handle/textHandler/listenMessageHandler.py then reads
    msg_json["state"] == "detect" (line 55), "text" in msg_json (line 58), and
    original_text.startswith("[device_call]") (line 66), saying the rest as it is (line 68:
    the text after the tag, stripped), else starting a chat turn with the text (line 116);
    read at commit 7475ea2b of August 2026)."""
    assert json.loads(frame) == message  # one JSON object, as json.loads reads it
    assert message == {"type": "listen", "state": "detect", "text": text, "session_id": session_id}
    assert isinstance(message["text"], str)


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_alarm_in_3_s_speaks_on_the_link_beeps_and_shows(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config=generic()) as (backend, sim, device):
            await device.initialize()
            # A client that reads the alarms resource, subscribed.
            reply = await device.request("resources/subscribe", {"uri": "device://alarms"})
            assert reply["result"] == {}
            alarm = await add(device, in_seconds=3, label="tea is ready")
            assert (alarm["label"], alarm["repeat"], alarm["ask"]) == ("tea is ready", None, False)
            assert 0 < alarm["in_seconds"] <= 3
            assert alarm["due"] is not None  # the simulator's clock is the host's: known
            listed = await device.call_json("self.alarms.list")
            assert [a["id"] for a in listed["alarms"]] == [alarm["id"]]
            asked = await add(device, in_seconds=4, label="is the tea still hot?", ask=True)
            assert asked["id"] != alarm["id"]

            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "[device_call]tea is ready")
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "is the tea still hot?")
            # Each fired once: none left, and the store went with the last.
            assert await device.call_json("self.alarms.list") == {"alarms": []}
            assert not os.path.exists(os.path.join(tmp_path, ALARMS_FILE))
            logged = [n["params"]["data"] for n in device.notifications if n["method"] == "notifications/message"]
            while len(logged) < 2:
                logged.append((await device.notification("notifications/message"))["params"]["data"])
            assert [(d["alarm"], d["label"], d["late"]) for d in logged] == [
                (alarm["id"], "tea is ready", False), (asked["id"], "is the tea still hot?", False)]
            updated = [n for n in device.notifications if n["method"] == "notifications/resources/updated"]
            assert updated and updated[0]["params"] == {"uri": "device://alarms"}
            read = await device.request("resources/read", {"uri": "device://alarms"})
            assert json.loads(read["result"]["contents"][0]["text"]) == {"alarms": []}
        return sim

    sim = run(scenario(), timeout=100)
    record = sim.records()[-1]["hwsim"]
    assert record["pwm"]["15"]["freqs"] == [2000, 2000]  # the buzzer, once for each
    # The screen shows the last label for a minute (the board stopped within it).
    shown = oledtext.lines(record["oleds"]["0:60"], micropython)
    assert shown[1:] == ["is the tea still", "hot?"]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_an_alarm_survives_a_restart_is_removed_and_a_missed_one_fires_late(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            await device.initialize()
            later = await add(device, in_seconds=600, label="ten minutes")
            missed = await add(device, in_seconds=600, label="missed while off")
            with open(os.path.join(tmp_path, ALARMS_FILE)) as f:
                stored = json.load(f)
            assert [a["label"] for a in stored["alarms"]] == ["ten minutes", "missed while off"]

            # A restart (machine.reset()): the board comes back with both.
            assert (await device.call("self.reboot"))["isError"] is False
            device = await backend.next_device()
            await device.initialize()
            listed = (await device.call_json("self.alarms.list"))["alarms"]
            assert [(a["id"], a["label"], a["due"]) for a in listed] == [
                (later["id"], "ten minutes", later["due"]), (missed["id"], "missed while off", missed["due"])]
            removed = await device.call_json("self.alarms.remove", {"id": later["id"]})
            assert removed == {"removed": later["id"]}
            reply = await device.request("tools/call", {"name": "self.alarms.remove",
                                                        "arguments": {"id": later["id"]}})
            assert reply["error"]["code"] == -32602 and "no alarm" in reply["error"]["message"]
            listed = (await device.call_json("self.alarms.list"))["alarms"]
            assert [a["label"] for a in listed] == ["missed while off"]

            # Off while the other was due: its time moved 20 minutes back in flash (as a
            # board powered off for that long finds it), then a restart.
            sim.stop()
            with open(os.path.join(tmp_path, ALARMS_FILE)) as f:
                stored = json.load(f)
            assert [a["label"] for a in stored["alarms"]] == ["missed while off"]
            stored["alarms"][0]["due"] -= 1200
            with open(os.path.join(tmp_path, ALARMS_FILE), "w") as f:
                json.dump(stored, f)
            sim.start()
            device = await backend.next_device()
            frame, message = await next_frame(device, "listen")
            assert_detect(frame, message, device.session_id, "[device_call]missed while off")
            await device.initialize()
            assert await device.call_json("self.alarms.list") == {"alarms": []}
            # Once: nothing more comes, and the board still answers.
            assert (await device.request("ping"))["result"] == {}
        return sim

    sim = run(scenario(), timeout=110)
    with open(sim.log_path) as log:
        text = log.read()
    assert text.count("missed while off") == 1 and "(late): missed while off" in text


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_bad_arguments_each_get_invalid_params_with_the_reason(tmp_path, micropython):
    # Without a tool catalogue: the tools made at run time (the other tests' boards have one).
    async def scenario():
        async with device_session(tmp_path, micropython, catalogue=False) as (backend, sim, device):
            await device.initialize()
            names = {tool["name"] for tool in (await device.list_tools())[0]}
            assert {"self.alarms.add", "self.alarms.list", "self.alarms.remove"} <= names
            assert "in_seconds" in await refused(device, {"in_seconds": 0, "label": "x"})
            assert "in_seconds" in await refused(device, {"in_seconds": -5, "label": "x"})
            assert "604800" in await refused(device, {"in_seconds": 604801, "label": "x"})
            assert "120" in await refused(device, {"in_seconds": 60, "label": "x" * 121})
            assert "label" in await refused(device, {"in_seconds": 60, "label": ""})
            assert "HH:MM" in await refused(device, {"at": "25:00", "label": "x"})
            assert "not both" in await refused(device, {"at": "12:00", "in_seconds": 5, "label": "x"})
            assert "daily" in await refused(device, {"in_seconds": 5, "label": "x", "repeat": "weekly"})
            # A time of day that has passed: the board's own clock says which one has.
            first = await add(device, in_seconds=3600, label="an hour")
            hour, minute = [int(n) for n in first["due"][11:].split(":")]
            # The board's minute of the day now; an hour ahead may be tomorrow's, so modulo.
            now = (hour * 60 + minute - 60) % 1440
            back = (now - 10) % 1440  # ten minutes ago, by the board's clock
            at = "%02d:%02d" % (back // 60, back % 60)
            if now >= 10:  # ten minutes ago is today
                assert "passed" in await refused(device, {"at": at, "label": "x"})
            else:  # just after midnight, ten minutes ago was yesterday: today's is ahead
                assert (await add(device, at=at, label="x"))["in_seconds"] > 0
            daily = await add(device, at=at, label="every day", repeat="daily")
            assert daily["repeat"] == "daily" and 0 < daily["in_seconds"] <= 86400
            for n in range(16 - len((await device.call_json("self.alarms.list"))["alarms"])):
                await add(device, in_seconds=600 + n, label="alarm %d" % n)
            assert "16" in await refused(device, {"in_seconds": 60, "label": "one more"})
        return sim

    run(scenario(), timeout=100)
