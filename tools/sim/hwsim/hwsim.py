"""Reset every simulated module at once, so each test starts from power-on."""

import camera
import esp32
import machine
import neopixel
import network


def reset(app_size=0x100000):
    """Power-on state everywhere; `app_size` is each OTA partition's size in bytes."""
    machine.sim_reset()
    esp32.sim_reset(app_size)
    network.sim_reset()
    camera.sim_reset()
    neopixel.sim_reset()
