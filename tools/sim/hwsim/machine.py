"""Simulated `machine` module: Pin, I2C, PWM, ADC, SPI (simspi.py, loaded at its first use),
reset and friends, in pure Python, standing in for MicroPython's `machine` on the host
board under CPython and the MicroPython unix port.

Nothing here touches hardware; every driver action is recorded so tests can assert on it
(`sim_attach_i2c()`, `sim_pwm(pin)`, `sim_pin(pin)`), and tests put the outside world on
the inputs (`sim_set_level()`, `sim_set_adc()`, `sim_input_hook()`). The records are
simhistory.History objects, bounded, so a simulated session may run for days on a flat
heap. `reset()` raises `ResetRequested`, a SystemExit whose code is RESET_EXIT_CODE, after
the simulated bootloader picked the partition set_boot() chose; the simulator boots the
firmware again. `sim_reset()` puts the module back to power-on state. Each helper:
docs/simulator.md, "The simulated machine and network".
"""

import sys

from simhistory import History

RESET_EXIT_CODE = 75
WRITES_KEPT = 64  # I2C register writes kept per device: an ES8311 start-up is about 40
DUTIES_KEPT = 16  # PWM duty values kept per PWM
FREQS_KEPT = 16  # PWM frequencies set (after the first) kept per PWM
LEVELS_KEPT = 16  # levels kept per Pin

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
DEEPSLEEP_RESET = 4
SOFT_RESET = 5

_UNIQUE_ID = b"\x24\x0a\xc4\x12\x34\x56"
_ENODEV = 19


class ResetRequested(SystemExit):
    """machine.reset() was called; the process should end and the firmware boot again."""


def _pin_id(pin):
    return pin.id if isinstance(pin, Pin) else pin


def sim_before_input():
    """Run the sim_input_hook() function, if any: every simulated input calls this first."""
    if _input_hook is not None:
        _input_hook()


class Pin:
    IN = 1
    OUT = 3
    OPEN_DRAIN = 7
    PULL_UP = 2
    PULL_DOWN = 1
    IRQ_RISING = 1
    IRQ_FALLING = 2

    def __init__(self, id, mode=-1, pull=-1, value=None):
        if not isinstance(id, int) or isinstance(id, bool) or id < 0:
            raise ValueError("invalid pin")
        self.id = id
        self.mode = mode
        self.pull = pull
        self.history = History(LEVELS_KEPT)  # the last levels driven onto the pin
        self._value = 0
        self._irq = None  # (handler, trigger)
        if value is not None:
            self.value(value)
        _state["pins"][id] = self

    def value(self, v=None):
        if v is None:
            if self.mode == Pin.IN:
                sim_before_input()
                return _level(self.id, self.pull)
            return self._value
        self._value = 1 if v else 0
        self.history.append(self._value)

    def irq(self, handler=None, trigger=3, priority=1, wake=None, hard=False):
        """Run handler(pin) on the trigger's edges (sim_set_level makes them)."""
        self._irq = (handler, trigger) if handler is not None else None
        return self

    def __call__(self, v=None):
        return self.value(v)

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)

    def init(self, mode=-1, pull=-1, value=None):
        self.mode = mode
        self.pull = pull
        if value is not None:
            self.value(value)


def __getattr__(name):
    if name == "SPI":
        from simspi import SPI

        return SPI
    raise AttributeError(name)


class I2CDevice:
    """A register-mapped I2C target. `width` is the register size in bytes (ES8311: 1,
    AW88298: 2, big-endian). Multi-register writes auto-increment like real codecs."""

    def __init__(self, regs=None, width=1):
        self.regs = dict(regs or {})
        self.width = width
        self.writes = History(WRITES_KEPT)
        self._pointer = 0

    def write(self, reg, data):
        w = self.width
        for i in range(0, len(data) - len(data) % w, w):
            value = int.from_bytes(data[i:i + w], "big")
            self.regs[reg] = value
            self.writes.append((reg, value))
            reg += 1

    def read(self, reg, n):
        out = bytearray()
        while len(out) < n:
            out += self.regs.get(reg, 0).to_bytes(self.width, "big")
            reg += 1
        return bytes(out[:n])

    def written(self, reg):
        """The values written to `reg` among the writes kept, oldest first."""
        return [v for r, v in self.writes if r == reg]


def _level(pin, pull):
    """What an input reads: the level put on the pin from outside, else its pull."""
    level = _state["levels"].get(pin)
    if level is None:
        return 1 if pull == Pin.PULL_UP else 0
    return level


class I2C:
    def __init__(self, id=0, *, scl=None, sda=None, freq=400000, timeout=50000):
        self.id = id
        self.scl = _pin_id(scl)
        self.sda = _pin_id(sda)
        self.freq = freq
        _state["i2c"][id] = self

    def _device(self, addr):
        dev = _state["devices"].get((self.id, addr))
        if dev is None:
            raise OSError(_ENODEV)  # no ACK: what the ESP32 port raises too
        return dev

    def scan(self):
        return sorted(addr for bus, addr in _state["devices"] if bus == self.id)

    def writeto(self, addr, buf, stop=True):
        # Register-mapped targets take the register address as the first byte.
        dev = self._device(addr)
        if buf:
            dev._pointer = buf[0]
            dev.write(buf[0], bytes(buf[1:]))
        return len(buf)

    def writevto(self, addr, vector, stop=True):
        # The pieces go out as one transaction: the first byte of the first is the register.
        return self.writeto(addr, b"".join(bytes(piece) for piece in vector), stop)

    def readfrom(self, addr, nbytes, stop=True):
        dev = self._device(addr)
        return dev.read(dev._pointer, nbytes)

    def writeto_mem(self, addr, memaddr, buf, *, addrsize=8):
        self._device(addr).write(memaddr, bytes(buf))

    def readfrom_mem(self, addr, memaddr, nbytes, *, addrsize=8):
        return self._device(addr).read(memaddr, nbytes)

    def readfrom_mem_into(self, addr, memaddr, buf, *, addrsize=8):
        buf[:] = self._device(addr).read(memaddr, len(buf))


class PWM:
    def __init__(self, dest, *, freq=None, duty_u16=None, duty_ns=None, duty=None, invert=False):
        self.pin = _pin_id(dest)
        self.invert = invert
        self.history = History(DUTIES_KEPT)  # the last duty_u16 values set, oldest first
        self.freqs = History(FREQS_KEPT)  # the frequencies set after the first, oldest first
        self.active = True
        self._freq = 5000 if freq is None else freq
        self._duty_u16 = 0
        self._duty_ns = None  # what duty_ns() was given last, until duty_u16() is
        if duty_u16 is not None:
            self.duty_u16(duty_u16)
        elif duty_ns is not None:
            self.duty_ns(duty_ns)
        elif duty is not None:
            self.duty(duty)
        _state["pwm"][self.pin] = self

    def freq(self, value=None):
        if value is None:
            return self._freq
        if not 0 < value <= 40000000:
            raise ValueError("frequency must be from 1Hz to 40MHz")
        self._freq = value
        self.freqs.append(value)

    def duty_u16(self, value=None):
        if value is None:
            return self._duty_u16
        if not 0 <= value <= 65535:
            raise ValueError("duty_u16 must be 0..65535")
        self._duty_u16 = value
        self._duty_ns = None
        self.history.append(value)

    def duty_ns(self, value=None):
        """The pulse width in ns; setting it records the duty_u16 it comes to as well."""
        if value is None:
            if self._duty_ns is not None:
                return self._duty_ns
            return self._duty_u16 * 1000000000 // (self._freq * 65535)
        duty = (value * self._freq * 65535 + 500000000) // 1000000000
        if not 0 <= duty <= 65535:
            raise ValueError("duty_ns is longer than the period")
        self.duty_u16(duty)
        self._duty_ns = value

    def duty(self, value=None):
        # The ESP32 port's 10-bit duty (0..1023), kept for older drivers.
        if value is None:
            return self._duty_u16 * 1023 // 65535
        self.duty_u16(value * 65535 // 1023)

    def deinit(self):
        self.active = False


class ADC:
    """An ADC channel on a pin: reads what sim_set_adc() put there (0 until then)."""

    ATTN_0DB = 0
    ATTN_2_5DB = 1
    ATTN_6DB = 2
    ATTN_11DB = 3

    def __init__(self, pin, *, atten=None):
        self.pin = _pin_id(pin)
        self._atten = atten
        self.reads = 0  # how many readings were taken
        _state["adcs"][self.pin] = self

    def atten(self, value):
        self._atten = value

    def read_u16(self):
        sim_before_input()
        self.reads += 1
        return _state["adc"].get(self.pin, 0)

    def read_uv(self):
        return self.read_u16() * 3300000 // 65535

    def read(self):
        return self.read_u16() >> 4


def unique_id():
    return _UNIQUE_ID


class RTC:
    """The real-time clock: datetime() reads, datetime(tuple) sets (year, month, day,
    weekday, hours, minutes, seconds, subseconds), as on the ESP32; sim_rtc() reads it."""

    def datetime(self, value=None):
        if value is None:
            return _state["rtc"] or (2000, 1, 1, 5, 0, 0, 0, 0)
        if len(value) != 8:
            raise ValueError("datetime needs 8 fields")
        _state["rtc"] = tuple(value)


def sim_rtc():
    """What the firmware last set the clock to (None: never set)."""
    return _state["rtc"]


def freq(hz=None):
    if hz is None:
        return _state["freq"]
    _state["freq"] = hz


def reset_cause():
    return _state["reset_cause"]


def reset():
    _state["reset_cause"] = SOFT_RESET  # esp_restart() reads back as SOFT_RESET on ESP32
    esp32 = sys.modules.get("esp32")
    if esp32 is not None and hasattr(esp32, "sim_boot"):
        esp32.sim_boot()
    raise ResetRequested(RESET_EXIT_CODE)


# --- simulation control (not part of MicroPython's machine) ---

def sim_reset():
    """Back to power-on: no devices, pins or PWMs; reset_cause() is PWRON_RESET."""
    global _state
    global _input_hook
    _state = {"pins": {}, "pwm": {}, "i2c": {}, "devices": {}, "freq": 240000000,
              "reset_cause": PWRON_RESET, "rtc": None, "levels": {}, "adc": {}, "adcs": {}}
    spi = sys.modules.get("simspi")
    if spi is not None:
        spi.reset()
    _input_hook = None


def sim_attach_i2c(bus_id, addr, device):
    """Wire `device` (an I2CDevice) to bus `bus_id` at 7-bit address `addr`; returns it."""
    _state["devices"][(bus_id, addr)] = device
    return device


def sim_i2c_device(bus_id, addr):
    return _state["devices"].get((bus_id, addr))


def sim_i2c_bus(bus_id):
    """The last I2C object made for `bus_id` (its scl/sda/freq), or None."""
    return _state["i2c"].get(bus_id)


def sim_pwm(pin):
    return _state["pwm"].get(pin)


def sim_pin(pin):
    return _state["pins"].get(pin)


def sim_pins():
    """{pin number: the last Pin object made for it}."""
    return _state["pins"]


def sim_pwms():
    """{pin number: its PWM}."""
    return _state["pwm"]


def sim_devices():
    """{(bus, address): the I2C device attached there}."""
    return _state["devices"]


def sim_set_level(pin, level):
    """Put `level` (0 or 1) on `pin` from outside; runs the pin's irq handler on a matching
    edge. None: nothing drives it any more (it reads its pull)."""
    pull = _state["pins"][pin].pull if pin in _state["pins"] else -1
    before = _level(pin, pull)
    _state["levels"][pin] = None if level is None else (1 if level else 0)
    after = _level(pin, pull)
    listener = _state["pins"].get(pin)
    if listener is None or listener._irq is None or after == before:
        return
    handler, trigger = listener._irq
    if trigger & (Pin.IRQ_RISING if after else Pin.IRQ_FALLING):
        handler(listener)


def sim_set_adc(pin, value):
    """What an ADC on `pin` reads with read_u16() (0..65535)."""
    if not 0 <= value <= 65535:
        raise ValueError("an ADC reads 0..65535")
    _state["adc"][pin] = value


def sim_adc(pin):
    """The last ADC made for `pin`, or None."""
    return _state["adcs"].get(pin)


def sim_input_hook(fn):
    """Run fn() before every input read (None: no hook)."""
    global _input_hook
    _input_hook = fn


_input_hook = None


sim_reset()
