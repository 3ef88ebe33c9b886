"""Espressif ESP32-S3-BOX-3: ES8311 speaker codec, 320x240 ILI9341 LCD, PWM backlight; the
LCD is the status screen (boards.setup.board_screen).

Pins, addresses and the panel's settings from the reference firmware (xiaozhi-esp32
main/boards/espressif/esp32-s3-box-3), not checked on the hardware here: SPI3_HOST (SPI(2))
at 40 MHz, mode 0; the reset line (GPIO 48) is active high; the controller is driven as an
ILI9341 whose init sequence also opens the ILI9342C's extended commands (C8h) and sets its
power and gamma registers (_PANEL_SETTINGS); MADCTL BGR with both mirrors (MX|MY: a
rotation of 180 here), no swap, colours not inverted (INVOFF).
"""

import time

import network
from machine import I2C, Pin

from boards import Board
from drivers.backlight import PwmBacklight
from drivers.display import Display
from drivers.es8311 import ES8311

NAME = "esp32_s3_box3"
PINS = {
    "i2c_sda": 8, "i2c_scl": 18,  # codec control bus (I2C port 1)
    "es8311_addr": 0x18, "es7210_addr": 0x40,  # speaker codec, microphone ADC
    "pa": 46,  # speaker amplifier enable
    "i2s_mclk": 2, "i2s_bclk": 17, "i2s_ws": 45, "i2s_dout": 15, "i2s_din": 16,
    "lcd_mosi": 6, "lcd_sclk": 7, "lcd_cs": 5, "lcd_dc": 4, "lcd_rst": 48,
    "backlight": 47,
    "boot_button": 0,
}
SAMPLE_RATE = 24000
PANEL = {"width": 320, "height": 240, "rotation": 180, "x_offset": 0, "y_offset": 0,
         "invert": False, "bgr": True, "spi": 2, "freq": 40000000, "polarity": 0, "phase": 0}
# The reference's vendor init, less what drivers.st7789 sends itself (MADCTL, COLMOD,
# SLPOUT, DISPON): extended command set on, power control, VCOM, gamma, frame rate.
_PANEL_SETTINGS = (
    (0xC8, b"\xff\x93\x42"), (0xC0, b"\x0e\x0e"), (0xC5, b"\xd0"), (0xC1, b"\x02"),
    (0xB4, b"\x02"),
    (0xE0, b"\x00\x03\x08\x06\x13\x09\x39\x39\x48\x02\x0a\x08\x17\x17\x0f"),
    (0xE1, b"\x00\x28\x29\x01\x0d\x03\x3f\x33\x52\x04\x0f\x0e\x37\x38\x0f"),
    (0xB1, b"\x00\x1b"), (0xB7, b"\x06"))


def _reset_panel():
    # Active high: held high 10 ms resets the controller, low lets it run.
    rst = Pin(PINS["lcd_rst"], Pin.OUT, value=1)
    time.sleep(0.01)
    rst.value(0)
    time.sleep(0.12)


def create(config, settings):
    from boards.setup import add_parts, board_screen, optional, restore  # the start's only

    board = Board(NAME)
    i2c = I2C(1, sda=Pin(PINS["i2c_sda"]), scl=Pin(PINS["i2c_scl"]), freq=400000)
    board.speaker = optional("ES8311 codec", lambda: ES8311(
        i2c, PINS["es8311_addr"], SAMPLE_RATE, pa_pin=Pin(PINS["pa"], Pin.OUT)))
    board.backlight = PwmBacklight(PINS["backlight"])
    board.display = Display(320, 240, "ILI9341")
    board.wlan = network.WLAN(network.STA_IF)
    add_parts(board, config, PINS, chip="esp32s3")
    restore(board, settings)
    board_screen(board, PANEL, PINS, settings, _reset_panel,
                     _PANEL_SETTINGS)
    return board
