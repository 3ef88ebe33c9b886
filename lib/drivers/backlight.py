"""Display backlights: a PWM-dimmed LED pin, or the AXP2101 regulator feeding the LED."""

from machine import PWM, Pin

from drivers import check_percent
from umcp.compat import const

AXP2101_ADDR = const(0x34)
_DLDO1_VOLTAGE = const(0x99)
_FULL = const(65535)


class PwmBacklight:
    """0..100 % maps linearly onto the PWM duty, inverted for active-low backlights.

    25 kHz keeps the backlight's boost inductor out of the audible range (as the
    reference firmware's LEDC setup does).
    """

    def __init__(self, pin, invert=False, freq=25000):
        self._invert = invert
        self._pwm = PWM(Pin(pin, Pin.OUT), freq=freq, duty_u16=self._duty(0))
        self.brightness = 0

    def set_brightness(self, percent):
        check_percent("brightness", percent)
        self._pwm.duty_u16(self._duty(percent))
        self.brightness = percent

    def _duty(self, percent):
        duty = percent * _FULL // 100
        return _FULL - duty if self._invert else duty


class Axp2101Backlight:
    """The AXP2101 PMIC's DLDO1 output powers the LCD backlight (M5Stack CoreS3).

    Brightness sets DLDO1's voltage (0.5 V + 0.1 V per step) with the reference firmware's
    mapping: 0..100 % -> steps 20..23, i.e. 2.5..2.8 V. The panel stays faintly lit at 0 %,
    as it does on the reference firmware.
    """

    def __init__(self, i2c, addr=AXP2101_ADDR):
        self._i2c = i2c
        self._addr = addr
        self.brightness = 0

    def set_brightness(self, percent):
        check_percent("brightness", percent)
        step = (percent + 641) >> 5
        self._i2c.writeto_mem(self._addr, _DLDO1_VOLTAGE, bytes((step,)))
        self.brightness = percent
