"""Any ESP32, ESP32-S2, ESP32-S3, ESP32-C3 or ESP32-C6 board (a DevKit with a relay, an LED strip, a sensor...):
what config.json's "parts" lists (lib/parts, docs/boards.md) and Wi-Fi, nothing else.
config.json's "chip" names the chip where the firmware cannot tell (the simulator); on a
board the running chip decides which pins exist. A screen among the parts (an OLED, an
SPI LCD) shows the activation code.
"""

import network

from boards import Board

NAME = "generic"
PINS = {}  # the board's own: none; every pin is the maker's


def create(config, settings):
    from boards.setup import add_parts  # the start's only: dropped after it

    board = Board(NAME)
    board.wlan = network.WLAN(network.STA_IF)
    add_parts(board, config, PINS)
    return board
