"""AW88298 smart speaker amplifier (M5Stack CoreS3): start-up, output volume, mute.

16-bit registers, big-endian. Values follow Espressif's esp_codec_dev aw88298 driver as the
reference firmware (xiaozhi-esp32, CoreS3AudioCodec) configures it: I2S 16-bit, DAC on.
"""

from umcp.compat import const

from drivers import check_percent
from drivers.codec import db_to_register, hw_gain_db, volume_db

ADDR = const(0x36)

_SYSCTRL2 = const(0x05)
_I2SCTRL = const(0x06)
_VOLUME = const(0x0C)  # HAGCCFG4: volume in the high byte
_VOLUME_LOW = const(0x64)  # low byte the reference keeps
_HMUTE = const(0x10)

# The volume byte spans 0xC0 = -96 dB to 0x00 = 0 dB.
_VOL_REG_MIN = const(0xC0)
_VOL_DB_MIN = -96.0  # floats: const() takes them only from MicroPython 1.25
_VOL_REG_MAX = const(0x00)
_VOL_DB_MAX = 0.0

# (register, value) pairs written once at start-up, in order.
_OPEN = (
    (0x00, 0x55AA),  # reset the chip
    (0x04, 0x4040),  # SYSCTRL: I2S on, amplifier and chip powered up
    (0x05, 0x0008),  # SYSCTRL2: no mute, AGC and DC correction off
    (0x06, 0x3CC8),  # I2SCTRL: BCK mode 16 x 2
    (0x0C, 0x3064),  # volume until set_volume()
    (0x61, 0x0673),  # BSTCTRL2: boost off
)

# I2SCTRL sample-rate field (low nibble).
_RATES = const((8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 96000, 192000))


class AW88298:
    def __init__(self, i2c, addr=ADDR, sample_rate=24000, gain_db=None):
        """`gain_db`: hardware gain after the DAC (default: CoreS3's 3.3 V into 5 V, +1 dB)."""
        if sample_rate not in _RATES:
            raise ValueError("unsupported sample rate %r" % sample_rate)
        self._i2c = i2c
        self._addr = addr
        self._gain_db = hw_gain_db(pa_gain_db=1.0) if gain_db is None else gain_db
        self.volume = None
        for reg, value in _OPEN:
            self._write(reg, value)
        # 16-bit samples clear the width field; the rate goes in the low nibble.
        self._write(_I2SCTRL, 0x3C00 | _RATES.index(sample_rate))

    def set_volume(self, volume):
        check_percent("volume", volume)
        db = volume_db(volume) - self._gain_db
        level = db_to_register(db, _VOL_REG_MIN, _VOL_DB_MIN, _VOL_REG_MAX, _VOL_DB_MAX)
        self._write(_VOLUME, level << 8 | _VOLUME_LOW)
        self.volume = volume

    def mute(self, muted=True):
        value = int.from_bytes(self._i2c.readfrom_mem(self._addr, _SYSCTRL2, 2), "big")
        self._write(_SYSCTRL2, (value | _HMUTE) if muted else (value & ~_HMUTE))

    def _write(self, reg, value):
        self._i2c.writeto_mem(self._addr, reg, bytes((value >> 8, value & 0xFF)))
