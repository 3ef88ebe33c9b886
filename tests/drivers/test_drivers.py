"""Drivers over the simulated hardware: the registers, duty cycles and frames they produce."""

import struct
import sys

import pytest

import camera as sim_camera
import hwsim
import machine
import network
import neopixel
from drivers.aw88298 import AW88298
from drivers.backlight import Axp2101Backlight, PwmBacklight
from drivers.camera import Camera
from drivers.codec import hw_gain_db, volume_db
from drivers.display import Display
from drivers.es8311 import ES8311

CAM_PINS = {"d0": 11, "d1": 9, "d2": 8, "d3": 10, "d4": 12, "d5": 18, "d6": 17, "d7": 16,
            "xclk": 15, "pclk": 13, "vsync": 6, "href": 7, "sda": 4, "scl": 5,
            "pwdn": -1, "reset": -1}


@pytest.fixture(autouse=True)
def power_on():
    hwsim.reset()


def codec_on_bus(addr, width=1, regs=None):
    device = machine.sim_attach_i2c(0, addr, machine.I2CDevice(regs, width))
    return machine.I2C(0, sda=machine.Pin(1), scl=machine.Pin(2)), device


def jpeg_size(data):
    """(width, height) from a JPEG's SOF0 segment, walking the segments."""
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9"
    pos = 2
    while pos < len(data):
        assert data[pos] == 0xFF
        marker = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if marker == 0xC0:
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        pos += 2 + length
    raise AssertionError("no SOF0 segment")


# --- ES8311 ---

def test_es8311_start_up_sequence_configures_slave_i2s_playback():
    pa = machine.Pin(46, machine.Pin.OUT)
    i2c, chip = codec_on_bus(0x18)
    ES8311(i2c, 0x18, sample_rate=24000, pa_pin=pa)
    regs = chip.regs
    assert chip.written(0x44) == [0x08, 0x08, 0x58]  # first write repeated, then DAC reference
    assert regs[0x00] == 0x80  # powered, slave
    assert regs[0x01] == 0x3F  # clocks on, MCLK from pin
    assert (regs[0x09], regs[0x0A]) == (0x0C, 0x4C)  # I2S 16-bit in, ADC out muted
    assert chip.written(0x04) == [0x10, 0x10]  # DAC OSR for 24 kHz
    assert (regs[0x06], regs[0x07], regs[0x08]) == (0x03, 0x00, 0xFF)
    assert (regs[0x0D], regs[0x12], regs[0x14], regs[0x37]) == (0x01, 0x00, 0x1A, 0x08)
    assert 0x32 not in regs  # volume untouched until set
    assert pa.history == [1]


def test_es8311_oversamples_more_at_16khz():
    i2c, chip = codec_on_bus(0x18)
    ES8311(i2c, 0x18, sample_rate=16000)
    assert chip.regs[0x04] == 0x20


@pytest.mark.parametrize("volume, register", [(0, 0x06), (50, 0x94), (100, 0xC6)])
def test_es8311_volume_register_matches_esp_codec_dev(volume, register):
    # esp_codec_dev: 50 -> -25 dB; minus hw gain 20*log10(3.3/5) = -3.6 dB -> -21.4 dB;
    # register = (dB + 95.5) * 2 truncated = 148 = 0x94.
    i2c, chip = codec_on_bus(0x18)
    codec = ES8311(i2c)
    codec.set_volume(volume)
    assert chip.writes[-1] == (0x32, register)
    assert codec.volume == volume


def test_es8311_volume_is_linear_in_half_db_steps():
    i2c, chip = codec_on_bus(0x18)
    codec = ES8311(i2c)
    for volume in range(1, 100):
        codec.set_volume(volume)
        assert chip.regs[0x32] == 98 + volume  # 0.5 dB per step on both sides


@pytest.mark.parametrize("bad", [-1, 101, "50", 50.0, True, None])
def test_es8311_rejects_bad_volume_without_writing(bad):
    i2c, chip = codec_on_bus(0x18)
    codec = ES8311(i2c)
    before = len(chip.writes)
    with pytest.raises(ValueError):
        codec.set_volume(bad)
    assert len(chip.writes) == before and codec.volume is None


def test_es8311_mute_sets_and_clears_dac_mute_bits():
    i2c, chip = codec_on_bus(0x18, regs={0x31: 0x81})
    codec = ES8311(i2c)
    codec.mute()
    assert chip.regs[0x31] == 0xE1
    codec.mute(False)
    assert chip.regs[0x31] == 0x81


def test_missing_codec_raises_oserror():
    i2c = machine.I2C(0)
    with pytest.raises(OSError):
        ES8311(i2c, 0x18)


# --- AW88298 ---

def test_aw88298_start_up_writes_16_bit_registers():
    i2c, chip = codec_on_bus(0x36, width=2)
    AW88298(i2c, sample_rate=24000)
    assert chip.writes == [(0x00, 0x55AA), (0x04, 0x4040), (0x05, 0x0008), (0x06, 0x3CC8),
                           (0x0C, 0x3064), (0x61, 0x0673), (0x06, 0x3C05)]


@pytest.mark.parametrize("volume, register", [(0, 0xBA64), (50, 0x2C64), (100, 0x0064)])
def test_aw88298_volume_register_matches_esp_codec_dev(volume, register):
    # 50 -> -25 dB minus (-3.6 + 1) dB hw gain = -22.4 dB; 0xC0 - (dB + 96) * 2 -> 0x2C.
    i2c, chip = codec_on_bus(0x36, width=2)
    amp = AW88298(i2c)
    amp.set_volume(volume)
    assert chip.writes[-1] == (0x0C, register)


def test_aw88298_mute_toggles_hmute():
    i2c, chip = codec_on_bus(0x36, width=2)
    amp = AW88298(i2c)
    amp.mute()
    assert chip.regs[0x05] == 0x0018
    amp.mute(False)
    assert chip.regs[0x05] == 0x0008


def test_aw88298_rejects_unknown_sample_rate():
    i2c, chip = codec_on_bus(0x36, width=2)
    with pytest.raises(ValueError):
        AW88298(i2c, sample_rate=12345)
    assert chip.writes == []


def test_volume_curve_end_points():
    assert volume_db(0) == -96.0 and volume_db(1) == -49.5 and volume_db(100) == 0.0
    assert round(hw_gain_db(), 3) == -3.609


# --- backlights ---

@pytest.mark.parametrize("invert, duties", [(False, [0, 32767, 65535]),
                                            (True, [65535, 32768, 0])])
def test_pwm_backlight_duty(invert, duties):
    light = PwmBacklight(47, invert=invert)
    pwm = machine.sim_pwm(47)
    assert pwm.freq() == 25000
    assert pwm.history == [65535 if invert else 0]  # starts dark
    for percent, duty in zip((0, 50, 100), duties):
        light.set_brightness(percent)
        assert pwm.duty_u16() == duty
    assert light.brightness == 100
    assert machine.sim_pin(47).mode == machine.Pin.OUT


def test_pwm_backlight_rejects_out_of_range():
    light = PwmBacklight(47)
    with pytest.raises(ValueError):
        light.set_brightness(101)
    assert machine.sim_pwm(47).history == [0]


@pytest.mark.parametrize("percent, step", [(0, 20), (50, 21), (100, 23)])
def test_axp2101_backlight_sets_dldo1_voltage(percent, step):
    i2c, pmic = codec_on_bus(0x34)
    Axp2101Backlight(i2c).set_brightness(percent)
    assert pmic.writes == [(0x99, step)]


# --- display ---

def test_display_theme_and_info():
    display = Display(320, 240, "ILI9341")
    assert display.theme == "light"
    display.set_theme("dark")
    assert display.info() == {"width": 320, "height": 240, "type": "ILI9341",
                              "monochrome": False, "theme": "dark"}
    with pytest.raises(ValueError):
        display.set_theme("blue")
    assert display.theme == "dark"


# --- camera ---

def test_camera_capture_returns_jpeg_of_the_frame_size():
    cam = Camera(CAM_PINS, frame_size="QVGA", quality=70)
    config = sim_camera.sim_camera().config
    assert config["data_pins"] == [11, 9, 8, 10, 12, 18, 17, 16]
    assert (config["xclk_pin"], config["pclk_pin"], config["vsync_pin"], config["href_pin"],
            config["sda_pin"], config["scl_pin"]) == (15, 13, 6, 7, 4, 5)
    assert config["pixel_format"] == sim_camera.PixelFormat.JPEG
    assert config["jpeg_quality"] == 70
    photo = cam.capture()
    assert isinstance(photo, bytes)
    assert jpeg_size(photo) == (320, 240)
    cam.set_frame_size("VGA")
    assert jpeg_size(cam.capture()) == (640, 480)
    assert cam.info() == {"sensor": "OV2640", "width": 640, "height": 480, "quality": 70}
    cam.set_quality(40)
    assert config["jpeg_quality"] == 40
    with pytest.raises(ValueError):
        cam.set_quality(101)
    cam.deinit()
    with pytest.raises(OSError):
        cam.capture()


def test_camera_capture_failure_is_an_oserror():
    cam = Camera(CAM_PINS)
    sim_camera.sim_fail_captures(1)
    with pytest.raises(OSError):
        cam.capture()
    assert jpeg_size(cam.capture()) == (320, 240)


def test_camera_rejects_unknown_frame_size():
    with pytest.raises(ValueError):
        Camera(CAM_PINS, frame_size="HUGE")


def test_camera_without_camera_module_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "camera", None)
    with pytest.raises(ImportError, match="camera support"):
        Camera(CAM_PINS)


# --- the simulations themselves ---

def test_i2c_scan_lists_attached_devices_only():
    codec_on_bus(0x18)
    codec_on_bus(0x40)
    machine.sim_attach_i2c(1, 0x34, machine.I2CDevice())
    assert machine.I2C(0).scan() == [0x18, 0x40]


def test_i2c_writeto_uses_first_byte_as_register():
    i2c, chip = codec_on_bus(0x18)
    i2c.writeto(0x18, b"\x10\x01\x02")
    assert chip.writes == [(0x10, 1), (0x11, 2)]
    assert i2c.readfrom(0x18, 2) == b"\x01\x02"


def test_reset_raises_and_reads_back_as_soft_reset():
    assert machine.reset_cause() == machine.PWRON_RESET
    with pytest.raises(machine.ResetRequested) as info:
        machine.reset()
    assert isinstance(info.value, SystemExit)
    assert info.value.code == machine.RESET_EXIT_CODE
    assert machine.reset_cause() == machine.SOFT_RESET


def test_wlan_fails_as_told_then_connects():
    wlan = network.WLAN(network.STA_IF)
    wlan.active(True)
    network.sim_fail_connects(2, network.STAT_WRONG_PASSWORD)
    for _ in range(2):
        wlan.connect("net", "bad")
        assert not wlan.isconnected() and wlan.status() == network.STAT_WRONG_PASSWORD
    wlan.connect("net", "good")
    assert wlan.isconnected() and wlan.ifconfig()[0] == "192.168.4.2"
    assert network.sim_connects() == [("net", "bad")] * 2 + [("net", "good")]
    assert len(wlan.config("mac")) == 6


def test_neopixel_records_writes():
    strip = neopixel.NeoPixel(machine.Pin(48), 3)
    strip[1] = (1, 2, 3)
    strip.write()
    assert neopixel.sim_strip(48).frames == [[(0, 0, 0), (1, 2, 3), (0, 0, 0)]]
