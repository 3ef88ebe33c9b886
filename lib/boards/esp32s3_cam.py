"""A generic ESP32-S3 camera board (OV2640 on the Freenove / ESP32-S3-EYE style DVP pinout),
with a 240x320 ST7789 SPI LCD and PWM backlight, as the reference firmware's
bread-compact-wifi-s3cam (xiaozhi-esp32 main/boards/bread-compact-wifi-s3cam).

Its speaker is a MAX98357A I2S amplifier, which has no volume control to drive: no speaker
here. The lamp on GPIO 14 is a relay part (lib/parts), declared as config.json's parts are:
the reference's self.lamp.* tools.

The LCD is the status screen (boards.setup.board_screen), with the reference's settings for its
240x320 ST7789 (CONFIG_LCD_ST7789_240X320), not checked on the hardware here: SPI3_HOST
(SPI(2)) at 40 MHz, mode 0, reset on GPIO 21 (active low), no mirror or swap, no offsets,
RGB order, colours inverted (INVON, an IPS panel).
"""

import network

from boards import Board
from drivers.backlight import PwmBacklight
from drivers.camera import Camera
from drivers.display import Display

NAME = "esp32s3_cam"
# Modules the board's MicroPython build must have (make deploy checks them): the camera
# comes with camera-enabled builds only (e.g. the micropython-camera-API user C module).
REQUIRES = ("camera",)
PINS = {
    "camera": {"d0": 11, "d1": 9, "d2": 8, "d3": 10, "d4": 12, "d5": 18, "d6": 17, "d7": 16,
               "xclk": 15, "pclk": 13, "vsync": 6, "href": 7, "sda": 4, "scl": 5,
               "pwdn": -1, "reset": -1},
    "i2s_spk_dout": 39, "i2s_spk_bclk": 40, "i2s_spk_lrck": 41,  # MAX98357A
    "i2s_mic_sck": 2, "i2s_mic_ws": 1, "i2s_mic_din": 42,  # INMP441
    "lcd_mosi": 20, "lcd_sclk": 19, "lcd_cs": 45, "lcd_dc": 47, "lcd_rst": 21,
    "backlight": 38,
    "led": 48, "lamp": 14, "boot_button": 0,
}


LAMP = {"type": "relay", "name": "lamp", "pin": PINS["lamp"]}
PANEL = {"width": 240, "height": 320, "rotation": 0, "x_offset": 0, "y_offset": 0,
         "invert": True, "bgr": False, "spi": 2, "freq": 40000000, "polarity": 0, "phase": 0}


def create(config, settings):
    from boards.setup import add_parts, board_screen, optional, restore  # the start's only

    board = Board(NAME)
    board.backlight = PwmBacklight(PINS["backlight"])
    board.display = Display(240, 320, "ST7789")
    board.camera = optional("camera", lambda: Camera(PINS["camera"]))
    board.wlan = network.WLAN(network.STA_IF)
    add_parts(board, config, PINS, (LAMP,), "esp32s3")
    restore(board, settings)
    board_screen(board, PANEL, PINS, settings)
    return board
