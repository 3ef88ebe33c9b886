"""M5Stack CoreS3: AW88298 speaker amplifier, 320x240 ILI9342C LCD lit by the AXP2101 PMIC.

Pins, addresses and the power-up sequence from the reference firmware (xiaozhi-esp32
main/boards/m5stack/core-s3). The GC0308 camera is not wired up here.

The LCD is the status screen (boards.setup.board_screen), with the reference's settings, not checked
on the hardware here: an ILI9342C on SPI3_HOST (SPI(2)) at 40 MHz in SPI mode 2 (clock idle
high), no chip reset line of its own: the AW9523 expander's P1.1 resets it (low 20 ms, then
high); BGR order, colours inverted (INVON), no mirror or swap, no offsets. It needs the
AXP2101's rails: without them (the power-up failed) the board runs without a screen.
"""

import time

import network
from machine import I2C, Pin

from boards import Board
from drivers.aw88298 import AW88298
from drivers.backlight import Axp2101Backlight
from drivers.display import Display

NAME = "m5stack_cores3"
PINS = {
    "i2c_sda": 12, "i2c_scl": 11,  # internal I2C bus (port 1)
    "axp2101_addr": 0x34, "aw9523_addr": 0x58, "aw88298_addr": 0x36,
    "es7210_addr": 0x40, "ft6336_addr": 0x38,
    "i2s_mclk": 0, "i2s_bclk": 34, "i2s_ws": 33, "i2s_dout": 13, "i2s_din": 14,
    "lcd_mosi": 37, "lcd_sclk": 36, "lcd_cs": 3, "lcd_dc": 35,
}
SAMPLE_RATE = 24000
PANEL = {"width": 320, "height": 240, "rotation": 0, "x_offset": 0, "y_offset": 0,
         "invert": True, "bgr": True, "spi": 2, "freq": 40000000, "polarity": 1, "phase": 0}

# AXP2101 rails: LDO voltages (0.5 V + 0.1 V/step) and enables, as the reference sets them.
_AXP2101_POWER = ((0x99, 25), (0x97, 28), (0x69, 0x35), (0x30, 0x3F), (0x90, 0xBF),
                  (0x94, 28), (0x95, 28))
# AW9523 I/O expander: outputs holding the amplifier, LCD and touch out of reset.
_AW9523_INIT = ((0x02, 0x07), (0x03, 0x8F), (0x04, 0x18), (0x05, 0x0C), (0x11, 0x10),
                (0x12, 0xFF), (0x13, 0xFF))
_AXP2101_STATUS = 0x01
_AXP2101_BATTERY_PERCENT = 0xA4


class CoreS3(Board):
    def __init__(self, i2c):
        super().__init__(NAME)
        self._i2c = i2c

    def status(self):
        status = super().status()
        try:
            read = self._i2c.readfrom_mem
            level = read(PINS["axp2101_addr"], _AXP2101_BATTERY_PERCENT, 1)[0]
            direction = (read(PINS["axp2101_addr"], _AXP2101_STATUS, 1)[0] >> 5) & 3
            status["battery"] = {"level": level, "charging": direction == 1}
        except OSError:
            pass  # the PMIC did not answer: report what is known
        return status


def _write_all(i2c, addr, pairs):
    for reg, value in pairs:
        i2c.writeto_mem(addr, reg, bytes((value,)))


def _power_up(i2c):
    """Bring up the LCD, camera and amplifier rails; True once done."""
    axp = PINS["axp2101_addr"]
    ldo_enable = i2c.readfrom_mem(axp, 0x90, 1)[0] | 0xB4
    i2c.writeto_mem(axp, 0x90, bytes((ldo_enable,)))
    _write_all(i2c, axp, _AXP2101_POWER)
    _write_all(i2c, PINS["aw9523_addr"], _AW9523_INIT)
    return True


def _reset_amplifier(i2c):
    # The AW88298's reset line is the expander's P0.2.
    i2c.writeto_mem(PINS["aw9523_addr"], 0x02, b"\x03")
    time.sleep(0.01)
    i2c.writeto_mem(PINS["aw9523_addr"], 0x02, b"\x07")
    time.sleep(0.05)


def _reset_panel(i2c):
    # The ILI9342C's reset line is the expander's P1.1 (the other P1 outputs as the reference).
    i2c.writeto_mem(PINS["aw9523_addr"], 0x03, b"\x81")
    time.sleep(0.02)
    i2c.writeto_mem(PINS["aw9523_addr"], 0x03, b"\x83")
    time.sleep(0.01)


def _speaker(i2c):
    _reset_amplifier(i2c)
    return AW88298(i2c, PINS["aw88298_addr"], SAMPLE_RATE)


def create(config, settings):
    from boards.setup import add_parts, board_screen, optional, restore  # the start's only

    i2c = I2C(1, sda=Pin(PINS["i2c_sda"]), scl=Pin(PINS["i2c_scl"]), freq=400000)
    board = CoreS3(i2c)
    if optional("AXP2101/AW9523 power-up", lambda: _power_up(i2c)):
        board.speaker = optional("AW88298 amplifier", lambda: _speaker(i2c))
        board.backlight = Axp2101Backlight(i2c, PINS["axp2101_addr"])
    board.display = Display(320, 240, "ILI9342C")
    board.wlan = network.WLAN(network.STA_IF)
    add_parts(board, config, PINS, chip="esp32s3")
    restore(board, settings)
    if board.backlight is not None:  # the PMIC's rails are up: the LCD has power
        board_screen(board, PANEL, PINS, settings, lambda: _reset_panel(i2c))
    return board
