"""The simulated host board: the real drivers over the simulated hardware in tools/hwsim.

An ES8311 codec on I2C bus 0, a PWM backlight, a 320x240 display, an OV2640-like camera and
an 8-LED RGB strip, all recorded by hwsim. No Wi-Fi: the host's own network is used.
"""

import esp32
import machine
import neopixel
from machine import I2C, Pin

from boards import Board
from drivers.backlight import PwmBacklight
from drivers.camera import Camera
from drivers.display import Display
from drivers.es8311 import ES8311
from umcp import INTEGER, Property, PropertyList

if not hasattr(machine, "sim_attach_i2c"):
    raise ImportError("boards.host needs the simulated hardware (tools/hwsim on sys.path)")

NAME = "host"
PINS = {
    "i2c_sda": 8, "i2c_scl": 18, "es8311_addr": 0x18, "pa": 46,
    "backlight": 47,
    "led_strip": 48,
    "camera": {"d0": 11, "d1": 9, "d2": 8, "d3": 10, "d4": 12, "d5": 18, "d6": 17, "d7": 16,
               "xclk": 15, "pclk": 13, "vsync": 6, "href": 7, "sda": 4, "scl": 5,
               "pwdn": -1, "reset": -1},
}
LED_COUNT = 8
SAMPLE_RATE = 24000


class HostBoard(Board):
    tool_names = ("led_strip", "host")  # its own tools' namespaces: no part may take them

    def __init__(self):
        super().__init__(NAME)
        self.chip = "esp32s3"  # the simulated board takes ESP32-S3 images
        # Solder the simulated codec onto the bus before the driver talks to it.
        machine.sim_attach_i2c(0, PINS["es8311_addr"], machine.I2CDevice())
        i2c = I2C(0, sda=Pin(PINS["i2c_sda"]), scl=Pin(PINS["i2c_scl"]))
        self.speaker = ES8311(i2c, PINS["es8311_addr"], SAMPLE_RATE,
                              pa_pin=Pin(PINS["pa"], Pin.OUT))
        self.backlight = PwmBacklight(PINS["backlight"])
        self.display = Display(320, 240, "simulated")
        self.camera = Camera(PINS["camera"])
        self.led_strip = neopixel.NeoPixel(Pin(PINS["led_strip"], Pin.OUT), LED_COUNT)
        self.led_color = (0, 0, 0)

    def status(self):
        status = super().status()
        status["simulated"] = True
        return status

    def register_tools(self, server):
        super().register_tools(server)  # config.json's parts, if any
        server.add_tool(
            "self.led_strip.set_color",
            "Set every LED of the board's RGB strip to one colour. Use when the user asks "
            "to light the LEDs in a colour; 0,0,0 turns them off.",
            PropertyList([Property(name, INTEGER, minimum=0, maximum=255,
                                   description=name + " level, 0-255")
                          for name in ("red", "green", "blue")]),
            self.set_led_color, idempotent=True, destructive=False)
        server.add_tool(
            "self.led_strip.get_state", "The LED strip's colour and number of LEDs.",
            PropertyList([]), self.led_state, read_only=True,
            output_schema='{"type":"object","properties":{"color":{"type":"array","items":'
                          '{"type":"integer"}},"leds":{"type":"integer"}},"required":["color","leds"]}')
        server.add_tool(
            "self.host.get_temperature", "The chip's temperature in degrees Celsius.",
            PropertyList([]), self.temperature, read_only=True,
            output_schema='{"type":"object","properties":{"celsius":{"type":"number"}},'
                          '"required":["celsius"]}')

    def set_led_color(self, args):
        self.led_color = (args["red"], args["green"], args["blue"])
        self.led_strip.fill(self.led_color)
        self.led_strip.write()
        return True

    def led_state(self, args):
        return {"color": list(self.led_color), "leds": len(self.led_strip)}

    def temperature(self, args):
        return {"celsius": esp32.mcu_temperature()}


def create(config, settings):
    from boards.setup import add_parts, restore  # the start's only: dropped after it

    board = HostBoard()
    add_parts(board, config, PINS)
    restore(board, settings)
    return board
