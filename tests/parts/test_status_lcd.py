"""The status screen (umcpfw.statusview) on an SPI colour LCD part (parts.lcd,
drivers.st7789) end to end: the simulated board with a 320x240 panel marked "status": true,
real MCP calls over the real link, on CPython and MicroPython, and the panel's pixels
(hwsim's simlcd, recorded when the boot ends) read back as text in the theme's colours."""

import asyncio

import pytest

from tests.support import lcdtext
from tests.support.firmwareharness import RUNTIMES, RUNTIMES_MPY, device_session, run
from tests.support.otacheckserver import run_pending_activation

pytestmark = pytest.mark.timeout(150)

WHITE = 0xFFFF
BLACK = 0x0000
# On the host board (its own pins are 4-18 and 46-48) and on a plain ESP32 DevKit.
HOST_LCD = {"type": "lcd", "name": "tft", "sck": 19, "mosi": 23, "dc": 21, "cs": 22, "rst": 25, "bl": 26,
            "width": 320, "height": 240, "status": True}
DEVKIT_LCD = {"type": "lcd", "name": "tft", "sck": 18, "mosi": 23, "dc": 16, "cs": 5, "rst": 17, "bl": 4,
              "width": 240, "height": 320, "rotation": 90, "status": True}


def panel(sim):
    record = sim.records()[-1]["hwsim"]["lcds"]
    assert len(record) == 1
    return list(record.values())[0]


@pytest.mark.parametrize("micropython", RUNTIMES_MPY)
def test_the_lcd_shows_the_link_the_last_tool_the_volume_in_the_dark_theme(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"parts": [HOST_LCD]}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 40}) is True
            assert await device.call_json("self.screen.set_brightness", {"brightness": 30}) is True
            assert await device.call_json("self.screen.set_theme", {"theme": "dark"}) is True
            shown = await device.call_json("self.tft.show_text", {"text": "a maker's words"})
            assert shown == {"lines": ["a maker's words"]}
            # The maker's text holds the panel; clear gives it back to the status view.
            assert await device.call_json("self.tft.clear") is True
            await asyncio.sleep(0.5)  # the view's task draws after the call's answer
        return sim

    sim = run(scenario(), timeout=120)
    lcd = panel(sim)
    assert lcd["on"] and lcd["awake"] and lcd["colmod"] == 0x55 and lcd["outside"] == 0
    assert lcdtext.lines(lcd, micropython, WHITE) == ["Online", "tft.clear ok", "Volume 40", "Brightness 30"]
    colors = lcdtext.colors(lcd)
    assert set(colors) == {WHITE, BLACK} and colors[BLACK] > colors[WHITE]  # dark: white on black


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_light_theme_is_black_text_on_white_and_a_maker_s_text_holds_it(tmp_path, micropython):
    async def scenario():
        async with device_session(tmp_path, micropython, extra_config={"parts": [HOST_LCD]}) as (
                backend, sim, device):
            await device.initialize()
            assert await device.call_json("self.screen.set_theme", {"theme": "light"}) is True
            await asyncio.sleep(0.5)
            assert await device.call_json("self.tft.show_text", {"text": "Hello"}) == {"lines": ["Hello"]}
            assert await device.call_json("self.audio_speaker.set_volume", {"volume": 55}) is True
            await asyncio.sleep(0.5)
        return sim

    sim = run(scenario(), timeout=120)
    lcd = panel(sim)
    assert lcdtext.lines(lcd, micropython, BLACK) == ["Hello"]  # the status view waits for clear
    colors = lcdtext.colors(lcd)
    assert set(colors) == {WHITE, BLACK} and colors[WHITE] > colors[BLACK]


@pytest.mark.parametrize("micropython", RUNTIMES)
def test_the_lcd_shows_the_activation_code_while_pending(tmp_path, micropython):
    # A 240x320 ST7789 on an ESP32 DevKit, turned to landscape: the glass read turned back.
    sim = run_pending_activation(tmp_path, micropython, {"board": "generic", "parts": [DEVKIT_LCD]})
    lcd = panel(sim)
    assert (lcd["width"], lcd["height"]) == (240, 320) and lcd["madctl"] & 0x20  # MV: turned
    # Turned 90 degrees clockwise: the picture's row y is the glass's column 239 - y.
    turned = dict(lcd, width=320, height=240, ram=_turned_back(lcd))
    # The generic board's theme starts light: black text on white.
    assert lcdtext.lines(turned, micropython, BLACK) == ["Activation code", "731406", "enter it at xiaozhi.me"]
    assert set(lcdtext.colors(lcd)) == {WHITE, BLACK}


def _turned_back(lcd):
    """The glass of a panel turned 90 degrees clockwise, as the picture reads (hex)."""
    glass = lcdtext.pixels(lcd)
    width, height = lcd["width"], lcd["height"]
    out = bytearray()
    for y in range(width):  # the picture is height x width
        for x in range(height):
            color = glass[x][width - 1 - y]
            out += bytes((color >> 8, color & 0xFF))
    return out.hex()
