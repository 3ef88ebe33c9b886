"""A turn's text on the status screen (umcpfw.turntext) end to end, on CPython and inside
MicroPython: the local backend (tools.backend) on loopback sends what a xiaozhi server
sends in a chat turn (stt, llm emotion, tts sentence_start) to the simulated board with an
SSD1306 status screen, whose RAM is read back as text when the boot ends; the
device://conversation resource holds the lines; malformed frames are dropped with the
board still serving; a board without a screen keeps nothing of them."""

import asyncio
import json

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, RUNTIMES_MPY, TOKEN, WAIT_S, Sim, device_session, run
from tools.backend import Backend
from tools.backend.console import Console

pytestmark = pytest.mark.timeout(150)

STATUS_OLED = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}
URI = "device://conversation"


def shown(sim, micropython):
    return oledtext.lines(sim.records()[-1]["hwsim"]["oleds"]["0:60"], micropython)


async def conversation(request):
    """device://conversation, read with `request` (a Device's), parsed."""
    reply = await request("resources/read", {"uri": URI})
    reply = reply.get("result", reply)  # the harness's device gives the whole payload
    content = reply["contents"][0]
    assert content["mimeType"] == "application/json"
    return json.loads(content["text"])


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_the_screen_shows_what_was_heard_what_is_said_and_the_emotion(tmp_path, micropython):
    out = []

    async def scenario():
        backend = Backend(TOKEN, host="127.0.0.1", out=out.append)
        await backend.start()
        sim = Sim(backend.websocket_url, tmp_path, micropython=micropython,
                  extra_config={"parts": [STATUS_OLED]}).start()
        try:
            device = await backend.wait_ready(WAIT_S * 2)
            # One turn as a xiaozhi server sends it, then the owner's `say` at the console.
            await device.send_turn(["It is ten past five.", "Anything else?"], heard="what time is it",
                                   emotion="happy")
            await Console(backend, out.append).execute("say 1 Bye now")
            assert not [line for line in out if line.startswith("error")], out
            kept = await conversation(device.request)
            assert kept == {"emotion": "happy", "turns": [
                {"role": "user", "text": "what time is it"},
                {"role": "assistant", "text": "It is ten past five."},
                {"role": "assistant", "text": "Anything else?"},
                {"role": "assistant", "text": "Bye now"}]}
            # Seven more lines: the resource keeps the last six, the oldest gone.
            await device.send_turn(["line %d" % n for n in range(7)])
            kept = await conversation(device.request)
            assert [turn["text"] for turn in kept["turns"]] == ["line %d" % n for n in range(1, 7)]
            # The first turn again, to be seen on the screen after the older lines.
            await device.send_turn(["It is ten past five.", "Anything else?"], heard="what time is it",
                                   emotion="happy")
            result = await backend.call(device, "self.get_device_status")
            assert result["isError"] is False
            await asyncio.sleep(0.5)  # the view's task draws after the last frame
        finally:
            stopped = sim.stop()
            await backend.close()
        assert stopped == 0
        return sim

    sim = run(scenario(), timeout=130)
    # Eight rows of 16 characters: the state, the emotion, then the newest lines that fit.
    assert shown(sim, micropython) == ["Online", "(happy)", "line 6", "> what time is", "it",
                                       "It is ten past", "five.", "Anything else?"]


MALFORMED = [
    {"type": "stt"},  # no text
    {"type": "stt", "text": 42},
    {"type": "stt", "text": "   \n "},
    {"type": "tts", "state": "sentence_start", "text": None},
    {"type": "tts", "state": "sentence_start"},
    {"type": "tts", "state": "no such state", "text": "never shown"},
    {"type": "tts"},
    {"type": "llm", "emotion": ["happy"]},
    {"type": "llm", "emotion": ""},
    {"type": "llm"},
]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_malformed_turns_are_dropped_and_a_huge_text_is_cut(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"parts": [STATUS_OLED]}) as (
                backend, sim, device):
            await device.initialize()
            reply = await device.request("resources/subscribe", {"uri": URI})
            assert reply["result"] == {}
            for message in MALFORMED:
                await device.send_raw(json.dumps(dict(message, session_id=device.session_id)))
            await device.send_raw(json.dumps({"session_id": device.session_id, "type": "stt",
                                              "text": "word " * 4000}))
            # Frames are handled in order: the one good frame's resources/updated comes first.
            updated = await device.notification("notifications/resources/updated")
            assert updated["params"] == {"uri": URI}
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 33}) is True
            kept = await conversation(device.request)
            assert kept == {"emotion": None, "turns": [{"role": "user", "text": ("word " * 24).strip()}]}
            assert not [n for n in device.notifications if n["method"] == "notifications/resources/updated"]
            # One log line each for what had a text or an emotion to show, badly (the
            # device's log ring: MicroPython's info lines go only there).
            log = (await device.request("resources/read", {"uri": "device://log"}))["result"]
            ignored = [line for line in log["contents"][0]["text"].splitlines() if "without usable text" in line]
            assert len(ignored) == 8, ignored
            await asyncio.sleep(0.5)
        return sim

    sim = run(scenario(), timeout=130)
    lines = shown(sim, micropython)
    assert lines[0] == "Online" and lines[1:] == ["word word word"] * 7


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_board_without_a_screen_ignores_a_turn_s_text(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython) as (backend, sim, device):
            await device.initialize()
            for message in MALFORMED + [{"type": "stt", "text": "hello"},
                                        {"type": "tts", "state": "sentence_start", "text": "hi"}]:
                await device.send_raw(json.dumps(dict(message, session_id=device.session_id)))
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 34}) is True
            listed = await device.request("resources/list")
            uris = [resource["uri"] for resource in listed["result"]["resources"]]
            assert "device://log" in uris and URI not in uris
            missing = await device.request("resources/read", {"uri": URI})
            assert "error" in missing
            log = (await device.request("resources/read", {"uri": "device://log"}))["result"]
            text = log["contents"][0]["text"]
            assert "without usable text" not in text and "ignored a stt" not in text
            assert "ignored a llm" not in text and "ignored a tts" not in text

    run(scenario(), timeout=130)
