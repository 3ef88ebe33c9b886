"""Simulated `camera` module, after the micropython-camera-API user C module (an OV2640).

`Camera(...)` takes the same keyword arguments and checks the required pins the way the
generic firmware does. capture() returns a small but valid baseline JPEG (a uniform grey
frame) with the configured frame size, as a memoryview like the real module's frame buffer.
Only PixelFormat.JPEG is simulated. `sim_camera()` is the live Camera (its `config` and
`captures` count); `sim_fail_captures(n)` makes the next n captures fail (return None, as
the real module does); `sim_reset()` starts afresh.
"""


class PixelFormat:
    RGB565 = 0
    YUV422 = 1
    GRAYSCALE = 3
    JPEG = 4
    RGB888 = 5


class FrameSize:
    R96X96 = 0
    QQVGA = 1
    R128x128 = 2
    QCIF = 3
    HQVGA = 4
    R240X240 = 5
    QVGA = 6
    R320X320 = 7
    CIF = 8
    HVGA = 9
    VGA = 10
    SVGA = 11
    XGA = 12
    HD = 13
    SXGA = 14
    UXGA = 15


class GrabMode:
    WHEN_EMPTY = 0
    LATEST = 1


# (width, height) of each FrameSize value, as esp32-camera's resolution table.
_DIMENSIONS = ((96, 96), (160, 120), (128, 128), (176, 144), (240, 176), (240, 240),
               (320, 240), (320, 320), (400, 296), (480, 320), (640, 480), (800, 600),
               (1024, 768), (1280, 720), (1280, 1024), (1600, 1200))


def jpeg(width, height):
    """A valid baseline greyscale JPEG of `width` x `height`, every pixel mid-grey.

    One component, one quantisation table of ones, and Huffman tables holding a single
    one-bit code each: DC difference category 0 and the AC end-of-block. Every 8x8 block
    is then the two bits 00; the scan is padded with 1 bits.
    """
    blocks = ((width + 7) // 8) * ((height + 7) // 8)
    nbits = 2 * blocks
    scan = bytearray(nbits // 8)
    if nbits % 8:
        scan.append(0xFF >> (nbits % 8))
    return b"".join((
        b"\xff\xd8",                                            # SOI
        b"\xff\xdb\x00\x43\x00" + b"\x01" * 64,                 # DQT
        b"\xff\xc0\x00\x0b\x08" + height.to_bytes(2, "big")
        + width.to_bytes(2, "big") + b"\x01\x01\x11\x00",       # SOF0
        b"\xff\xc4\x00\x14\x00\x01" + b"\x00" * 15 + b"\x00",   # DHT DC: one code, symbol 0
        b"\xff\xc4\x00\x14\x10\x01" + b"\x00" * 15 + b"\x00",   # DHT AC: one code, EOB
        b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00",            # SOS
        bytes(scan),
        b"\xff\xd9",                                            # EOI
    ))


class Camera:
    def __init__(self, *, data_pins=None, pclk_pin=None, vsync_pin=None, href_pin=None,
                 sda_pin=-1, scl_pin=-1, xclk_pin=None, i2c=None, xclk_freq=20000000,
                 powerdown_pin=-1, reset_pin=-1, pixel_format=PixelFormat.RGB565,
                 frame_size=FrameSize.QQVGA, jpeg_quality=85, fb_count=2,
                 grab_mode=GrabMode.LATEST, init=True):
        if not isinstance(data_pins, (list, bytearray)):
            raise TypeError("data_pins must be a list or bytearray")
        if len(data_pins) != 8:
            raise ValueError("data_pins must have 8 elements")
        if None in (pclk_pin, vsync_pin, href_pin, xclk_pin):
            raise TypeError("pclk_pin, vsync_pin, href_pin and xclk_pin are required")
        if i2c is None and -1 in (sda_pin, scl_pin):
            raise ValueError("Either i2c object or sda_pin/scl_pin must be specified")
        if not 0 <= jpeg_quality <= 100:
            raise ValueError("jpeg quality must be in range 0-100")
        self.config = {"data_pins": list(data_pins), "pclk_pin": pclk_pin,
                       "vsync_pin": vsync_pin, "href_pin": href_pin, "sda_pin": sda_pin,
                       "scl_pin": scl_pin, "xclk_pin": xclk_pin, "xclk_freq": xclk_freq,
                       "powerdown_pin": powerdown_pin, "reset_pin": reset_pin,
                       "pixel_format": pixel_format, "frame_size": frame_size,
                       "jpeg_quality": jpeg_quality, "fb_count": fb_count,
                       "grab_mode": grab_mode}
        self.captures = 0
        self.initialized = init
        _state["camera"] = self

    def init(self):
        self.initialized = True

    def deinit(self):
        self.initialized = False

    def capture(self):
        if not self.initialized:
            raise OSError("Camera not initialized")
        if self.config["pixel_format"] != PixelFormat.JPEG:
            raise ValueError("hwsim camera: only PixelFormat.JPEG is simulated")
        if _state["failures"]:
            _state["failures"] -= 1
            return None
        self.captures += 1
        return memoryview(jpeg(self.get_pixel_width(), self.get_pixel_height()))

    def reconfigure(self, frame_size=None, pixel_format=None, grab_mode=None, fb_count=None):
        for key, value in (("frame_size", frame_size), ("pixel_format", pixel_format),
                           ("grab_mode", grab_mode), ("fb_count", fb_count)):
            if value is not None:
                self.config[key] = value

    def free_buffer(self):
        pass

    def get_frame_size(self):
        return self.config["frame_size"]

    def set_frame_size(self, frame_size):
        self.config["frame_size"] = frame_size

    def get_quality(self):
        return self.config["jpeg_quality"]

    def set_quality(self, quality):
        self.config["jpeg_quality"] = quality

    def get_pixel_width(self):
        return _DIMENSIONS[self.config["frame_size"]][0]

    def get_pixel_height(self):
        return _DIMENSIONS[self.config["frame_size"]][1]

    def get_sensor_name(self):
        return "OV2640"


# --- simulation control (not part of the camera module) ---

def sim_reset():
    global _state
    _state = {"camera": None, "failures": 0}


def sim_camera():
    return _state["camera"]


def sim_fail_captures(n):
    _state["failures"] = n


sim_reset()
