"""Output volume as decibels, the way Espressif's esp_codec_dev maps it.

The reference firmware calls esp_codec_dev_set_out_vol(dev, 0..100). The volume becomes
decibels on the default curve (0 -> -96 dB, then 1..100 linear from -49.5 dB to 0 dB); the
board's hardware gain is subtracted; the codec driver maps the result linearly onto its
volume register between two (register, dB) end points. Reproducing that keeps a volume
setting as loud here as on the reference firmware.
"""

import math


def volume_db(volume):
    if volume == 0:
        return -96.0
    return -50.0 + volume * 0.5


def hw_gain_db(dac_volts=3.3, pa_volts=5.0, pa_gain_db=0.0):
    """Gain of the path after the codec: DAC supply against PA supply, plus the PA's gain."""
    return 20 * math.log(dac_volts / pa_volts) / math.log(10) + pa_gain_db


def db_to_register(db, reg_min, db_min, reg_max, db_max):
    """The register value for `db` on the line from (reg_min, db_min) to (reg_max, db_max),
    clamped, truncated toward zero as the C driver's cast does."""
    if db >= db_max:
        return reg_max
    if db <= db_min:
        return reg_min
    ratio = (reg_max - reg_min) / (db_max - db_min)
    return int((db - db_min) * ratio + reg_min)
