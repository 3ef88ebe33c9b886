# The real boards' own LCDs (boards.setup.board_screen on drivers.st7789): each board module drives its
# panel, on hwsim's simulated chips at the board's pins (hwsim.solder_board), with the
# reference firmware's controller settings; the status view draws on it (the link, the last
# tool, volume, brightness, the activation code; the theme as the pixels' colours); a panel
# that fails at start leaves a board that runs without a screen. Runs under pytest and inside
# MicroPython (unix port, WebAssembly).
import json

import framebuf
import hwsim
import machine
import simspi
from umcpfw.boot import load_board as load
from umcp import McpServer
from umcp.compat import join_pieces
from umcpfw.statusview import StatusView

WHITE = 0xFFFF
BLACK = 0x0000


def _board(name, failing=False):
    hwsim.reset()
    module = load(name)
    panel = hwsim.solder_board(module)
    if failing:
        simspi.fail(module.PANEL["spi"])
    return module, module.create({}, None), panel


def _glass(rotation, width, height):
    """Where a picture's pixel lands on the glass (180: the BOX-3's mirrored X and Y)."""
    if rotation == 180:
        return lambda x, y: (width - 1 - x, height - 1 - y)
    return lambda x, y: (x, y)


def _reads(panel, rotation, row, text, color, background):
    """Whether text row `row` of the picture shows `text`, and nothing else, in `color` on
    `background`, as this runtime's framebuf draws it."""
    columns = (panel.width if rotation in (0, 180) else panel.height) // 8
    cells = framebuf.FrameBuffer(bytearray(columns * 8), columns * 8, 8, framebuf.MONO_HLSB)
    cells.text(text, 0, 0, 1)
    glass = _glass(rotation, panel.width, panel.height)
    for y in range(8):
        for x in range(columns * 8):
            want = color if cells.pixel(x, y) else background
            if panel.pixel(*glass(x, row * 8 + y)) != want:
                return False
    return True


class _Commands:
    """Every command byte written on the panel's bus (DC low), as a logic analyser would."""

    def __init__(self, pins):
        self.sck, self.mosi, self.dc = pins["lcd_sclk"], pins["lcd_mosi"], pins["lcd_dc"]
        self.commands = []

    def selected(self):
        return True

    def receive(self, data):
        if machine.sim_pin(self.dc).value() == 0:
            self.commands.extend(data)


class _Link:
    def __init__(self):
        self.connected = _Set()


class _Set:
    def is_set(self):
        return True


class _Ota:
    def __init__(self, activation):
        self.activation = activation


class _App:
    """What the status view reads of the application."""

    def __init__(self, board):
        self.board = board
        self.ota = None
        self.link = _Link()


def test_each_board_drives_its_own_panel_with_the_reference_settings():
    # name: (MADCTL, INVON, SPI mode (polarity), columns x rows of text)
    expected = {"esp32_s3_box3": (0xC8, False, 0, (40, 30)),  # MX|MY|BGR, INVOFF
                "m5stack_cores3": (0x08, True, 1, (40, 30)),  # BGR, INVON, SPI mode 2
                "esp32s3_cam": (0x00, True, 0, (30, 40))}  # RGB, INVON
    for name, (madctl, inverted, polarity, size) in expected.items():
        module, board, panel = _board(name)
        screen = board.part("screen")
        assert screen is not None and screen.status, name
        assert panel.on and panel.awake and panel.colmod == 0x55, name
        assert (panel.madctl, panel.inverted) == (madctl, inverted), name
        assert (screen.columns, screen.rows) == size, name
        spi = simspi.spi(2)  # SPI3_HOST, as the reference
        pins = module.PINS
        assert (spi.sck, spi.mosi, spi.miso, spi.baudrate) == (pins["lcd_sclk"], pins["lcd_mosi"], None, 40000000)
        assert spi.polarity == polarity, name
        assert panel.outside == 0, name  # every pixel landed on the glass
        assert board.display.info()["width"] == module.PANEL["width"]  # self.screen.get_info
        assert board.backlight.brightness == 75  # lit, as the reference, where none was saved
    # The BOX-3's reset is active high: high, then low to run; its power and gamma were sent.
    hwsim.reset()
    module = load("esp32_s3_box3")
    hwsim.solder_board(module)
    heard = simspi.attach(_Commands(module.PINS))
    load("esp32_s3_box3").create({}, None)
    assert machine.sim_pin(48).history[-2:] == [1, 0]
    assert [0xC8, 0xC0, 0xC5, 0xC1, 0xB4, 0xE0, 0xE1, 0xB1, 0xB7] == [
        c for c in heard.commands if c in (0xC8, 0xC0, 0xC5, 0xC1, 0xB4, 0xE0, 0xE1, 0xB1, 0xB7)]
    # The CoreS3's reset goes through the AW9523's P1.1: low, then high.
    _, board, panel = _board("m5stack_cores3")
    assert machine.sim_i2c_device(1, 0x58).written(0x03)[-2:] == [0x81, 0x83]
    # The camera board's reset is its own GPIO 21, active low.
    _, board, panel = _board("esp32s3_cam")
    assert machine.sim_pin(21).history[-2:] == [0, 1]


def test_the_status_view_shows_the_board_s_state_on_its_panel_in_the_theme_s_colours():
    for name, rotation in (("esp32_s3_box3", 180), ("m5stack_cores3", 0)):
        _, board, panel = _board(name)
        board.speaker.set_volume(40)
        board.backlight.set_brightness(30)
        app = _App(board)
        view = StatusView(board.part("screen"), app)
        view.on_call("self.audio_speaker.set_volume", True)
        board.display.set_theme("dark")
        view.draw()
        for row, text in enumerate(["Online", "set_volume ok",
                                    "Volume 40", "Brightness 30", ""]):
            assert _reads(panel, rotation, row, text, WHITE, BLACK), (name, text)
        board.display.set_theme("light")  # what self.screen.set_theme does
        view.draw()
        assert _reads(panel, rotation, 0, "Online", BLACK, WHITE), name
        assert _reads(panel, rotation, 3, "Brightness 30", BLACK, WHITE), name
        assert _reads(panel, rotation, 29, "", BLACK, WHITE), name  # the whole panel repainted
        # While an activation code is pending, it is all the panel shows.
        app.ota = _Ota({"code": "731406", "message": "enter it at xiaozhi.me"})
        view.draw()
        for row, text in enumerate(["Activation code", "731406", "enter it at xiaozhi.me", ""]):
            assert _reads(panel, rotation, row, text, BLACK, WHITE), (name, text)


def test_the_camera_board_s_portrait_panel_shows_the_status():
    _, board, panel = _board("esp32s3_cam")
    app = _App(board)
    view = StatusView(board.part("screen"), app)
    board.backlight.set_brightness(70)
    board.display.set_theme("light")
    view.draw()
    assert _reads(panel, 0, 0, "Online", BLACK, WHITE)
    assert _reads(panel, 0, 1, "Brightness 70", BLACK, WHITE)  # no speaker: no volume line
    assert _reads(panel, 0, 39, "", BLACK, WHITE)


def test_a_panel_that_fails_at_start_leaves_a_running_board_without_a_screen():
    for name in ("esp32_s3_box3", "m5stack_cores3", "esp32s3_cam"):
        _, board, panel = _board(name, failing=True)
        assert board.part("screen") is None, name
        assert board.backlight is not None and board.display is not None, name
        assert board.backlight.brightness == 0, name  # nothing to light
        board.display.set_theme("dark")  # the theme is still kept and reported
        assert board.display.info()["theme"] == "dark"
        server = McpServer(name, "1")
        board.register_tools(server)  # its tools (the camera board's lamp) still register
    # A CoreS3 whose PMIC does not answer has no rails for the panel: no screen, no reset tried.
    hwsim.reset()
    board = load("m5stack_cores3").create({}, None)
    assert board.part("screen") is None and board.backlight is None
    assert simspi.spi(2) is None


async def test_the_panel_is_the_board_s_screen_part_without_tools_after_config_s_parts():
    _, board, panel = _board("esp32_s3_box3")
    board.part("screen").show(["Online"])
    assert board.status()["parts"] == {"screen": {"lines": ["Online"]}}  # what it shows
    hwsim.reset()
    module = load("esp32_s3_box3")
    hwsim.solder_board(module)
    board = module.create({"parts": [{"type": "relay", "name": "fan", "pin": 1}]}, None)
    # config.json's parts first: a screen part of its own with "status" would be the view's.
    assert [part.name for part in board.parts] == ["fan", "screen"]
    server = McpServer("box3", "1")
    sent = []
    server.set_sender(lambda pieces: sent.append(json.loads(join_pieces(pieces))))
    board.register_tools(server)
    await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    names = [tool["name"] for tool in sent[-1]["result"]["tools"]]
    assert sorted(names) == ["self.fan.get_state", "self.fan.turn_off", "self.fan.turn_on"]  # no self.screen.*


class _ShortOfHeap:
    """A screen part whose panel's first `failures` draws find the heap full."""

    rows, columns, held, theme = 4, 16, False, "light"

    def __init__(self, failures):
        self.failures = failures
        self.shown = []

    def set_theme(self, theme):
        self.theme = theme

    def show(self, lines):
        if self.failures:
            self.failures -= 1
            raise MemoryError("memory allocation failed, allocating 130 bytes")
        self.shown.append(lines)


async def test_the_status_view_outlives_a_full_heap_and_draws_at_its_next_look():
    import asyncio

    _, board, panel = _board("m5stack_cores3")
    board.speaker.set_volume(40)
    screen = _ShortOfHeap(2)
    view = StatusView(screen, _App(board))
    task = asyncio.create_task(view.run())
    try:
        await asyncio.sleep(0.1)
        assert screen.failures == 1 and screen.shown == []  # the first draw failed
        view.changed()  # the next look: a change...
        await asyncio.sleep(0.1)
        assert screen.failures == 0 and screen.shown == []  # ...fails too,
        view.changed()
        await asyncio.sleep(0.1)
        assert screen.shown and screen.shown[-1][0] == "Online"  # and the next one draws
        assert not task.done()  # the view never stopped
    finally:
        task.cancel()
