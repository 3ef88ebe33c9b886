"""Espressif ESP32-S3-BOX-3: ES8311 speaker codec, 320x240 ILI9341 LCD, PWM backlight.

Pins and addresses from the reference firmware (xiaozhi-esp32 main/boards/esp-box-3).
"""

import network
from machine import I2C, Pin

from boards import Board, add_parts, optional, restore
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


def create(config, settings):
    board = Board(NAME)
    i2c = I2C(1, sda=Pin(PINS["i2c_sda"]), scl=Pin(PINS["i2c_scl"]), freq=400000)
    board.speaker = optional("ES8311 codec", lambda: ES8311(
        i2c, PINS["es8311_addr"], SAMPLE_RATE, pa_pin=Pin(PINS["pa"], Pin.OUT)))
    board.backlight = PwmBacklight(PINS["backlight"])
    board.display = Display(320, 240, "ILI9341")
    board.wlan = network.WLAN(network.STA_IF)
    add_parts(board, config, PINS, chip="esp32s3")
    restore(board, settings)
    return board
