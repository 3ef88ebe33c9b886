"""Simulated `dht` module: MicroPython's DHT11/DHT22 driver over simulated sensors.

A sensor answers on a pin once `sim_attach(pin, temperature, humidity)` put it there;
`sim_set(pin, temperature, humidity)` changes its air, `sim_fail(pin)` silences it (and
`sim_fail(pin, False)` brings it back). A measure() with no sensor answering raises
OSError(ETIMEDOUT), as the ESP32 port's dht_readinto does. `sim_sensor(pin)` is its
state, `.reads` how many measurements were taken.
"""

import machine

_ETIMEDOUT = 110


class _Sensor:
    def __init__(self, temperature, humidity):
        self.temperature = temperature
        self.humidity = humidity
        self.failing = False
        self.reads = 0


class DHTBase:
    def __init__(self, pin):
        self.pin = pin
        self._id = pin.id if hasattr(pin, "id") else pin
        self._reading = None

    def measure(self):
        machine.sim_before_input()
        sensor = _sensors.get(self._id)
        if sensor is None or sensor.failing:
            raise OSError(_ETIMEDOUT)
        sensor.reads += 1
        self._reading = (sensor.temperature, sensor.humidity)

    def _value(self, index):
        if self._reading is None:
            return 0  # as the real driver's zeroed buffer before any measure()
        return self._reading[index]


class DHT11(DHTBase):
    """Whole degrees and percent, as the DHT11 reports them."""

    def humidity(self):
        return int(self._value(1))

    def temperature(self):
        return int(self._value(0))


class DHT22(DHTBase):
    """Tenths of a degree and of a percent."""

    def humidity(self):
        return round(self._value(1) * 10) / 10

    def temperature(self):
        return round(self._value(0) * 10) / 10


# --- simulation control (not part of MicroPython's dht) ---

def sim_reset():
    _sensors.clear()


def sim_attach(pin, temperature=21.0, humidity=45.0):
    _sensors[pin] = sensor = _Sensor(temperature, humidity)
    return sensor


def sim_set(pin, temperature, humidity):
    sensor = _sensors[pin]
    sensor.temperature = temperature
    sensor.humidity = humidity


def sim_fail(pin, failing=True):
    _sensors[pin].failing = failing


def sim_sensor(pin):
    return _sensors.get(pin)


_sensors = {}
