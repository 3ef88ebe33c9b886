"""What the simulated boards are asked, the same for the demo, the benches and the tests:
make sim's calls on the host board; make sim-generic's parts (a part of each type but the
SPI LCD, as a maker's config.json lists them, docs/boards.md), what their sensors read and
a call to each. Data only (the parts read from generic.json)."""

import json
import os

# (what the call shows, tool name, arguments)
CALLS = [
    ("set the volume", "self.audio_speaker.set_volume", {"volume": 30}),
    ("read the device status", "self.get_device_status", {}),
    ("take a photo; the vision endpoint answers", "self.camera.take_photo",
     {"question": "What do you see?"}),
]
# The example parts, one of each type but the SPI LCD: generic.json beside this module, the
# one list the generic board's tests, make bench's tables and docs/boards.md take.
GENERIC_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generic.json")
with open(GENERIC_CONFIG, encoding="utf-8") as _file:
    GENERIC_PARTS = json.load(_file)["parts"]
# What the generic board's sensors read (tools.sim.board.write_inputs): the light sensor at
# about a third of its range, the battery at 3.9 V through its 2:1 divider (1.95 V on the
# pin of a 3.3 V ADC): about 67 %.
GENERIC_INPUTS = {"adc": {"34": 21000, "35": 38725}}
GENERIC_CALLS = [
    ("turn on the lamp (a relay)", "self.lamp.turn_on", {}),
    ("run the fan at 40 %", "self.fan.set_level", {"level": 40}),
    ("light the strip", "self.leds.set_color", {"red": 255, "green": 80, "blue": 0}),
    ("turn the servo to 90 degrees", "self.arm.set_angle", {"angle": 90}),
    ("beep", "self.beeper.beep", {"frequency": 880, "duration_ms": 100}),
    ("read the light sensor", "self.light.read", {}),
    ("read the room's temperature and humidity (DHT22)", "self.room.read", {}),
    ("read the water temperature (DS18B20)", "self.water.read", {}),
    ("read the battery", "self.battery.get_level", {}),
    ("write on the OLED", "self.panel.show_text", {"text": "Hello from umcp"}),
    ("read the device status", "self.get_device_status", {}),
]
