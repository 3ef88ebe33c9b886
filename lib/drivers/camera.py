"""Camera wrapper over the `camera` module of camera-enabled MicroPython builds
(micropython-camera-API: an OV2640 or similar on the ESP32's DVP port; needs PSRAM).

`pins` is a board's camera pin map: d0..d7, xclk, pclk, vsync, href, sda, scl, pwdn, reset
(-1 where not connected).
"""


class Camera:
    def __init__(self, pins, frame_size="QVGA", quality=80, xclk_freq=20000000):
        try:
            import camera
        except ImportError:
            raise ImportError("no camera module: flash a MicroPython build with camera "
                              "support (e.g. micropython-camera-API)")
        self._module = camera
        data_pins = [pins["d%d" % i] for i in range(8)]
        self._cam = camera.Camera(
            data_pins=data_pins, pclk_pin=pins["pclk"], vsync_pin=pins["vsync"],
            href_pin=pins["href"], sda_pin=pins["sda"], scl_pin=pins["scl"],
            xclk_pin=pins["xclk"], xclk_freq=xclk_freq, powerdown_pin=pins["pwdn"],
            reset_pin=pins["reset"], pixel_format=camera.PixelFormat.JPEG,
            frame_size=self._frame_size(frame_size), jpeg_quality=quality)

    def capture(self):
        """One JPEG frame, as bytes (a copy: the module's buffer is reused for the next)."""
        frame = self._cam.capture()
        if frame is None:
            raise OSError("camera capture failed")
        data = bytes(frame)
        self._cam.free_buffer()
        return data

    def set_frame_size(self, name):
        self._cam.set_frame_size(self._frame_size(name))

    def set_quality(self, quality):
        if not 0 <= quality <= 100:
            raise ValueError("quality must be 0..100")
        self._cam.set_quality(quality)

    def info(self):
        return {"sensor": self._cam.get_sensor_name(), "width": self._cam.get_pixel_width(),
                "height": self._cam.get_pixel_height(), "quality": self._cam.get_quality()}

    def deinit(self):
        self._cam.deinit()

    def _frame_size(self, name):
        size = getattr(self._module.FrameSize, name, None)
        if size is None:
            raise ValueError("unknown frame size %r" % (name,))
        return size
