"""Board descriptions: one module per board with NAME, PINS and create(config, settings):
`generic` (any ESP32: the peripherals config.json's "parts" lists), `esp32_s3_box3`,
`m5stack_cores3`, `esp32s3_cam`, and `host`, the simulated board (it needs tools/sim/hwsim).
On a board only this file and the chosen board's module are copied.

create() returns a Board whose peripherals are driver objects, or None where the board has
none (or where one did not answer at start-up: that is logged, and the device carries on
without it). It restores the saved volume, brightness and theme. Every board takes
config.json's "parts" (add_parts, lib/parts): a bad entry is a ValueError naming it.

Here is what a connected board keeps (Board); what only the start uses (load(), add_parts(),
optional(), restore()) is `setup`'s, loaded for the start and dropped after it.
"""

from umcp.compat import call_then_forget

# What the common tools need of a board (umcpfw.commonsetup): Board.features().
FEATURES = ("speaker", "backlight", "display", "camera", "wlan")


class Board:
    """What the firmware sees of a board; board modules fill in what they have."""

    def __init__(self, name):
        self.name = name
        self.speaker = None  # set_volume(0..100), .volume
        self.backlight = None  # set_brightness(0..100), .brightness
        self.display = None  # set_theme("light" | "dark"), .theme, info()
        self.camera = None  # capture() -> JPEG bytes
        self.wlan = None  # network.WLAN, or None where the board needs no Wi-Fi
        # The chip ("esp32s3"...) firmware images must be built for; None: the platform
        # says (sys.implementation._machine on a board).
        self.chip = None
        # config.json's parts (lib/parts), made by add_parts(): their tools follow the
        # board's own, sensors are read by run().
        self.parts = []

    def part(self, name):
        """The part of that name, or None (for a maker's module: board.part("lamp"))."""
        for part in self.parts:
            if part.name == name:
                return part
        return None

    def status(self):
        """Extra facts for self.get_device_status: the parts' state (from memory) too."""
        status = {"board": self.name}
        if self.parts:
            status["parts"] = dict((part.name, part.state()) for part in self.parts)
            for part in self.parts:
                if part.kind == "battery" and part.reading:  # as the CoreS3 shows its own
                    status["battery"] = {"level": part.reading["level"]}
                    break
        return status

    def features(self):
        """The common tools' hardware this board has (their names): what a tool catalogue
        was written for (umcp.catalogue) besides the board's name and parts."""
        return [name for name in FEATURES if getattr(self, name) is not None]

    def register_tools(self, server):
        """Board-only tools, registered after the common ones: the parts' (a board with
        tools of its own calls this first). Not called where a tool catalogue holds them."""
        if self.parts:
            call_then_forget("parts.toolset", "register", self.parts, server)

    def serve_parts(self, server):
        """The sensors tell `server`'s subscribers of a fresh reading, and their resources
        come at a client's first resources/* request."""
        sensors = False
        for part in self.parts:
            if part.poll_ms:
                part.server = server
                sensors = True
        if sensors:
            server.add_resources_later(self._part_resources)

    def _part_resources(self, server):
        call_then_forget("parts.toolset", "resources", self.parts, server)

    def upkeep(self, server):
        """The board's upkeep for the application's task on the main loop, a coroutine (the
        parts' sensors read on their schedules: parts.sensor.serve), or None where there is
        none."""
        for part in self.parts:
            if part.poll_ms:
                from parts.sensor import serve

                return serve(self.parts, server)
        return None

    def show_activation_code(self, code, message):
        """On the first screen among the parts (the code is logged on every board)."""
        for part in self.parts:
            if part.kind in ("oled", "lcd"):
                from parts.screen import wrap

                part.show(["Activation code", code] + wrap(message, part.columns))
                return
