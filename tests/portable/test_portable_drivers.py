# Driver logic over the simulated hardware: runs under pytest and inside MicroPython.
import camera
import framebuf
import hwsim
import machine
from drivers.aw88298 import AW88298
from drivers.backlight import Axp2101Backlight, PwmBacklight
from drivers.camera import Camera
from drivers.display import Display
from drivers.es8311 import ES8311
from drivers.ssd1306 import command, setup, theme
from parts.oled import text
from portable_support import raises
from simoled import SSD1306 as SimSSD1306

CAM_PINS = {"d0": 11, "d1": 9, "d2": 8, "d3": 10, "d4": 12, "d5": 18, "d6": 17, "d7": 16,
            "xclk": 15, "pclk": 13, "vsync": 6, "href": 7, "sda": 4, "scl": 5,
            "pwdn": -1, "reset": -1}


def _bus(addr, width=1):
    hwsim.reset()
    chip = machine.sim_attach_i2c(0, addr, machine.I2CDevice(None, width))
    return machine.I2C(0), chip



def test_ssd1306_text_lands_page_by_page_as_a_whole_frame_would_show_it():
    # No frame is kept: each line goes into one reusable page (drivers.ssd1306's set-up
    # makes it, parts.oled's text() draws with it). What the controller's RAM holds must be
    # what a whole-panel FrameBuffer would have drawn.
    for width, height in ((128, 64), (128, 32), (64, 48)):
        hwsim.reset()
        chip = machine.sim_attach_i2c(0, 0x3C, SimSSD1306(width, height))
        i2c = machine.I2C(0)
        drawing = setup(i2c, width, height)
        assert chip.on and not chip.inverted and chip.data_bytes == width * height // 8  # blanked
        lines = ["Temperature:", "21.5 C", "", "a line longer than the panel is wide"][:height // 8]
        text(i2c, 0x3C, drawing, height // 8, lines)
        frame = bytearray(width * height // 8)
        drawn = framebuf.FrameBuffer(frame, width, height, framebuf.MONO_VLSB)
        for row, line in enumerate(lines):
            drawn.text(line, 0, row * 8, 1)
        first = (128 - width) // 2  # a narrow panel sits in the middle columns
        for page in range(height // 8):
            assert chip.ram[page * 128 + first:page * 128 + first + width] == \
                frame[page * width:(page + 1) * width], (width, height, page)
        assert sum(frame[:width]) > 0 and sum(frame[2 * width:3 * width]) == 0
        text(i2c, 0x3C, drawing, height // 8, ["x"])  # fewer lines: the pages below are blanked
        assert sum(chip.ram[128:]) == 0 and sum(chip.ram[:128]) > 0
        theme(i2c, 0x3C, "light")
        assert chip.inverted
        assert raises(ValueError, theme, i2c, 0x3C, "blue")
        assert chip.inverted
        command(i2c, 0x3C, 0xAE)  # any other command: display off
        assert not chip.on
    hwsim.reset()
    chip = machine.sim_attach_i2c(0, 0x3C, SimSSD1306(128, 64))
    setup(machine.I2C(0), inverted=True)  # set up in the light theme
    assert chip.on and chip.inverted


def test_es8311_volume_registers():
    i2c, chip = _bus(0x18)
    codec = ES8311(i2c, 0x18, 24000)
    assert chip.regs[0x00] == 0x80 and chip.regs[0x01] == 0x3F and chip.regs[0x44] == 0x58
    for volume, register in ((0, 0x06), (50, 0x94), (100, 0xC6)):
        codec.set_volume(volume)
        assert chip.writes[-1] == (0x32, register), (volume, chip.writes[-1])
    for volume in range(1, 100):
        codec.set_volume(volume)
        assert chip.regs[0x32] == 98 + volume
    assert raises(ValueError, codec.set_volume, 101)
    assert codec.volume == 99


def test_aw88298_volume_registers():
    i2c, chip = _bus(0x36, 2)
    amp = AW88298(i2c)
    assert chip.regs[0x06] == 0x3C05 and chip.regs[0x61] == 0x0673
    for volume, register in ((0, 0xBA64), (50, 0x2C64), (100, 0x0064)):
        amp.set_volume(volume)
        assert chip.writes[-1] == (0x0C, register), (volume, chip.writes[-1])


def test_pwm_backlight_duty_plain_and_inverted():
    hwsim.reset()
    plain = PwmBacklight(47)
    inverted = PwmBacklight(38, invert=True)
    for percent, duty in ((0, 0), (50, 32767), (100, 65535)):
        plain.set_brightness(percent)
        inverted.set_brightness(percent)
        assert machine.sim_pwm(47).duty_u16() == duty
        assert machine.sim_pwm(38).duty_u16() == 65535 - duty
    assert machine.sim_pwm(47).freq() == 25000
    assert raises(ValueError, plain.set_brightness, -1)


def test_axp2101_backlight_steps():
    i2c, pmic = _bus(0x34)
    light = Axp2101Backlight(i2c)
    for percent in (0, 50, 100):
        light.set_brightness(percent)
    assert pmic.written(0x99) == [20, 21, 23]


def test_display_theme():
    display = Display(240, 320, "ST7789")
    display.set_theme("dark")
    assert display.info()["theme"] == "dark" and display.info()["height"] == 320
    assert raises(ValueError, display.set_theme, "pink")
    assert display.theme == "dark"


def test_camera_jpeg_markers_and_size():
    hwsim.reset()
    cam = Camera(CAM_PINS, frame_size="QQVGA")
    photo = cam.capture()
    assert photo[:2] == b"\xff\xd8" and photo[-2:] == b"\xff\xd9"
    sof = photo.find(b"\xff\xc0")
    assert sof > 0
    height = photo[sof + 5] << 8 | photo[sof + 6]
    width = photo[sof + 7] << 8 | photo[sof + 8]
    assert (width, height) == (160, 120)
    camera.sim_fail_captures(1)
    assert raises(OSError, cam.capture)


def test_missing_i2c_device_and_reset():
    i2c, chip = _bus(0x18)
    assert i2c.scan() == [0x18]
    assert raises(OSError, ES8311, i2c, 0x19)
    try:
        machine.reset()
        raise AssertionError("reset returned")
    except machine.ResetRequested as e:
        assert e.args[0] == machine.RESET_EXIT_CODE
    assert machine.reset_cause() == machine.SOFT_RESET


def test_hwsim_records_are_bounded_for_long_sessions():
    # A simulated board may run for days: its records keep the last entries and a count.
    import gc
    import sys

    i2c, chip = _bus(0x18)
    codec = ES8311(i2c, 0x18, 24000)
    pwm = machine.PWM(machine.Pin(47), freq=5000, duty_u16=0)

    def drive(steps):
        for step in range(steps):
            codec.set_volume(step % 101)
            pwm.duty_u16(step)

    drive(400)
    # The WebAssembly build's collector cannot see every root from here: no figure there.
    measure = hasattr(gc, "mem_alloc") and sys.platform != "webassembly"
    gc.collect()
    before = gc.mem_alloc() if measure else 0
    drive(2000)
    gc.collect()
    after = gc.mem_alloc() if measure else 0
    assert after - before < 1024, (before, after)  # flat, not 4000 more entries
    assert len(chip.writes) == machine.WRITES_KEPT and chip.writes.count > 2400
    assert chip.writes[-1] == (0x32, chip.regs[0x32])
    assert chip.written(0x32)[-1] == chip.regs[0x32]
    assert len(pwm.history) == machine.DUTIES_KEPT and pwm.history[-1] == 1999
    assert list(pwm.history) == list(range(2000 - machine.DUTIES_KEPT, 2000))
    assert pwm.history[-2:] == [1998, 1999] and pwm.history == list(pwm.history)
