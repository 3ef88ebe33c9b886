"""Inputs for a simulated board running in another process (tools.sim): a JSON file the
test writes (atomically: a new file renamed over the old), applied to the simulated
hardware whenever the firmware reads an input (an input pin, an ADC, a DHT, a 1-Wire bus)
and the file changed. `watch(path)` starts it.

    {"levels": {"0": 0},            pin -> level from outside (machine.sim_set_level)
     "adc": {"34": 30000},          pin -> what its ADC reads, 0..65535
     "dht": {"27": [22.5, 40.0]},   pin -> [temperature, humidity]; null: stops answering
     "ds18b20": {"26": 23.5}}       pin -> the temperature of its sensors; null: they stop

Keys left out keep their state; a file that is not readable JSON is ignored until it is.
"""

import json

import dht
import machine
import onewire

# The file is read at every input read (a button's is every 100 ms): a test's change is
# seen by the very next read, and a small file costs a simulation nothing.
_watched = {"path": None, "text": None}


def watch(path):
    """Apply `path` now and whenever it changes (checked before input reads)."""
    _watched["path"] = path
    _watched["text"] = None
    machine.sim_input_hook(refresh)
    refresh()


def refresh():
    try:
        with open(_watched["path"]) as f:
            text = f.read()
    except OSError:
        return
    if text == _watched["text"]:
        return
    try:
        inputs = json.loads(text)
    except ValueError:
        return
    _watched["text"] = text
    apply(inputs)


def apply(inputs):
    for pin, level in inputs.get("levels", {}).items():
        machine.sim_set_level(int(pin), level)
    for pin, value in inputs.get("adc", {}).items():
        machine.sim_set_adc(int(pin), value)
    for pin, air in inputs.get("dht", {}).items():
        sensor = dht.sim_sensor(int(pin))
        if sensor is None:
            continue
        sensor.failing = air is None
        if air is not None:
            sensor.temperature, sensor.humidity = air[0], air[1]
    for pin, temperature in inputs.get("ds18b20", {}).items():
        for device in onewire.sim_devices(int(pin)):
            device.failing = temperature is None
            if temperature is not None:
                device.temperature = temperature
