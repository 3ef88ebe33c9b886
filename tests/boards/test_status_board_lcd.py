"""The status screen on the real boards' own LCDs (boards.setup.board_screen): the firmware runs the
ESP32-S3-BOX-3's and the M5Stack CoreS3's board modules on simulated chips (hwsim's
solder_board: their codec, PMIC and expander, and the panel on their LCD pins), on CPython
and MicroPython, with real MCP calls over the real link; the panel's pixels (hwsim's simlcd,
recorded when the boot ends) read back as text in the theme's colours."""

import asyncio

import pytest

from tests.support import lcdtext
from tests.support.firmwareharness import RUNTIMES, device_session, run
from tests.support.otacheckserver import run_pending_activation

pytestmark = pytest.mark.timeout(150)

WHITE = 0xFFFF
BLACK = 0x0000


def panel(sim, dc):
    record = sim.records()[-1]["hwsim"]["lcds"]
    assert list(record) == ["dc %d" % dc]  # the board's own panel, on its DC pin
    return record["dc %d" % dc]


def turned_180(lcd):
    """The BOX-3's glass as the picture reads (its MADCTL mirrors both X and Y)."""
    ram = bytes.fromhex(lcd["ram"])
    pixels = [ram[i:i + 2] for i in range(0, len(ram), 2)]
    return dict(lcd, ram=b"".join(reversed(pixels)).hex())


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_box3_panel_shows_the_link_the_last_tool_volume_brightness_dark_then_light(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"board": "esp32_s3_box3"}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 40}) is True
            assert await device.call_json("self.screen.set_brightness", {"brightness": 30}) is True
            assert await device.call_json("self.screen.set_theme", {"theme": "dark"}) is True
            await asyncio.sleep(0.5)  # the view's task draws after the call's answer
            info = await device.call_json("self.screen.get_info")
            assert (info["width"], info["height"], info["theme"]) == (320, 240, "dark")
            await asyncio.sleep(0.5)
        return sim

    sim = run(scenario(), timeout=120)
    lcd = panel(sim, 4)
    assert lcd["on"] and lcd["awake"] and lcd["colmod"] == 0x55 and lcd["outside"] == 0
    assert lcd["madctl"] == 0xC8 and not lcd["inverted"]  # the reference's BGR, MX|MY, INVOFF
    picture = turned_180(lcd)
    assert lcdtext.lines(picture, micropython, WHITE) == ["Online", "get_info ok", "Volume 40", "Brightness 30"]
    colors = lcdtext.colors(lcd)
    assert set(colors) == {WHITE, BLACK} and colors[BLACK] > colors[WHITE]  # dark: white on black

    async def light():
        async with device_session(tmp_path, micropython, extra_config={"board": "esp32_s3_box3"}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.screen.set_theme", {"theme": "light"}) is True
            await asyncio.sleep(0.5)
        return sim

    sim = run(light(), timeout=120)
    lcd = panel(sim, 4)
    # The volume restored from the first run's settings: they survived the restart.
    assert lcdtext.lines(turned_180(lcd), micropython, BLACK) == [
        "Online", "set_theme ok", "Volume 40", "Brightness 30"]
    colors = lcdtext.colors(lcd)
    assert set(colors) == {WHITE, BLACK} and colors[WHITE] > colors[BLACK]  # light: black on white


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_cores3_panel_shows_the_activation_code_while_pending(tmp_path, micropython):
    sim = run_pending_activation(tmp_path, micropython, {"board": "m5stack_cores3"})
    lcd = panel(sim, 35)
    assert (lcd["width"], lcd["height"]) == (320, 240)
    assert lcd["madctl"] == 0x08 and lcd["inverted"]  # the reference's BGR, INVON, unturned
    # The board's theme starts light: black text on white.
    assert lcdtext.lines(lcd, micropython, BLACK) == ["Activation code", "731406", "enter it at xiaozhi.me"]
    assert set(lcdtext.colors(lcd)) == {WHITE, BLACK}
