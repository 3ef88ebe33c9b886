"""ES8311 audio codec: initialisation for playback, output volume and mute over I2C.

Register values follow Espressif's esp_codec_dev es8311 driver as the reference firmware
(xiaozhi-esp32, BoxAudioCodec) configures it: I2S slave, MCLK = 256 x sample rate from the
MCLK pin, 16-bit samples, DAC only.
"""

from umcp.compat import const

from drivers import check_percent
from drivers.codec import db_to_register, hw_gain_db, volume_db

ADDR = const(0x18)  # CE pin low

_CLK_DIV = const(0x02)
_CLK_DAC_OSR = const(0x04)
_GPIO = const(0x44)
_DAC_MUTE = const(0x31)
_DAC_VOLUME = const(0x32)

# DAC_VOLUME spans 0x00 = -95.5 dB to 0xFF = +32 dB in 0.5 dB steps.
_VOL_REG_MIN = const(0x00)
_VOL_DB_MIN = -95.5  # floats: const() takes them only from MicroPython 1.25
_VOL_REG_MAX = const(0xFF)
_VOL_DB_MAX = 32.0

# (register, value) pairs written once at start-up, in order.
_OPEN = bytes((
    0x44, 0x08,  # GPIO: I2C noise immunity
    0x01, 0x30, 0x02, 0x00, 0x03, 0x10, 0x16, 0x24, 0x04, 0x10, 0x05, 0x00,  # clock defaults
    0x0B, 0x00, 0x0C, 0x00, 0x10, 0x1F, 0x11, 0x7F,  # system: power-up defaults
    0x00, 0x80,  # reset register: power on, I2S slave
    0x01, 0x3F,  # clock manager: MCLK from the MCLK pin, all clocks on
    0x13, 0x10, 0x1B, 0x0A, 0x1C, 0x6A,  # system / ADC filter
    0x44, 0x58,  # GPIO: internal DAC reference for echo cancellation
    0x09, 0x0C, 0x0A, 0x4C,  # serial port: I2S 16-bit; DAC in, ADC output muted
    0x05, 0x00, 0x03, 0x10, 0x07, 0x00, 0x08, 0xFF, 0x06, 0x03,  # clocks for 256 x fs
))
_START = bytes((
    0x17, 0xBF, 0x0E, 0x02, 0x12, 0x00, 0x14, 0x1A,  # analog power-up, DAC on
    0x0D, 0x01, 0x15, 0x40, 0x37, 0x08, 0x45, 0x00,
))


class ES8311:
    def __init__(self, i2c, addr=ADDR, sample_rate=16000, pa_pin=None, gain_db=None):
        """`pa_pin`: the machine.Pin enabling the speaker amplifier, if the board has one.
        `gain_db`: hardware gain after the codec (default: 3.3 V DAC into a 5 V PA)."""
        self._i2c = i2c
        self._addr = addr
        self._gain_db = hw_gain_db() if gain_db is None else gain_db
        self.volume = None
        try:
            self._write(_GPIO, 0x08)
        except OSError:
            pass  # the first write after power-up may go unacknowledged; the reference retries
        self._write_table(_OPEN)
        # MCLK = 256 x fs needs no pre-divider; the DAC over-samples more below 16 kHz.
        self._write(_CLK_DIV, 0x00)
        self._write(_CLK_DAC_OSR, 0x20 if sample_rate <= 16000 else 0x10)
        self._write_table(_START)
        if pa_pin is not None:
            pa_pin.value(1)

    def set_volume(self, volume):
        check_percent("volume", volume)
        db = volume_db(volume) - self._gain_db
        self._write(_DAC_VOLUME, db_to_register(db, _VOL_REG_MIN, _VOL_DB_MIN,
                                                _VOL_REG_MAX, _VOL_DB_MAX))
        self.volume = volume

    def mute(self, muted=True):
        value = self._i2c.readfrom_mem(self._addr, _DAC_MUTE, 1)[0] & 0x9F
        self._write(_DAC_MUTE, (value | 0x60) if muted else value)

    def _write(self, reg, value):
        self._i2c.writeto_mem(self._addr, reg, bytes((value,)))

    def _write_table(self, table):
        for i in range(0, len(table), 2):
            self._write(table[i], table[i + 1])
