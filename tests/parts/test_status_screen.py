"""The status screen (umcpfw.statusview) end to end: the simulated board with an SSD1306
part marked "status": true, real MCP calls over the real link, on CPython and MicroPython,
and the OLED's RAM read back as text when the boot ends (hwsim's record)."""

import asyncio

import pytest

from tests.support import oledtext
from tests.support.firmwareharness import RUNTIMES, RUNTIMES_MPY, device_session, run
from tests.support.otacheckserver import run_pending_activation

pytestmark = pytest.mark.timeout(120)

STATUS_OLED = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}


def shown(sim, micropython):
    record = sim.records()[-1]["hwsim"]["oleds"]["0:60"]
    return oledtext.lines(record, micropython), record["inverted"]


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_the_screen_shows_the_link_the_last_tool_the_volume_and_the_theme(tmp_path, micropython):
    # The host board (a codec and a backlight) with the OLED as its status screen.
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"parts": [STATUS_OLED]}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 40}) is True
            assert await device.call_json("self.screen.set_brightness", {"brightness": 30}) is True
            assert await device.call_json("self.screen.set_theme", {"theme": "dark"}) is True
            # A failing call shows as an error (the maker's text tool on a panel that answers
            # is fine; an unknown setting is refused by the driver).
            result = await device.call("self.panel.show_text", {"text": "x" * 4})
            assert result["isError"] is False
            # The maker's text holds the panel; clear gives it back to the status view.
            assert await device.call_json("self.panel.clear") is True
            await asyncio.sleep(0.5)  # the view's task draws after the call's answer
        return sim

    sim = run(scenario(), timeout=100)
    lines, inverted = shown(sim, micropython)
    assert lines == ["Online", "panel.clear ok", "Volume 40", "Brightness 30"]
    assert inverted is False  # dark: light text on black


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_a_maker_s_text_holds_the_screen_and_light_inverts_it(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"parts": [STATUS_OLED]}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.screen.set_theme", {"theme": "light"}) is True
            shown_text = await device.call_json("self.panel.show_text", {"text": "Hello"})
            assert shown_text == {"lines": ["Hello"]}
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 55}) is True
            await asyncio.sleep(0.5)
        return sim

    sim = run(scenario(), timeout=100)
    lines, inverted = shown(sim, micropython)
    assert lines == ["Hello"]  # the status view waits for clear
    assert inverted is True


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_status_screen_shows_the_activation_code_while_pending(tmp_path, micropython):
    sim = run_pending_activation(tmp_path, micropython, {"board": "generic", "parts": [STATUS_OLED]})
    lines, _ = shown(sim, micropython)
    assert lines == ["Activation code", "731406", "enter it at", "xiaozhi.me"]
