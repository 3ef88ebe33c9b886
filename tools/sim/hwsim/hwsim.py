"""Reset every simulated module at once, so each test starts from power-on; solder the
simulated chips config.json's parts name onto the simulated board; snapshot what the
drivers did, as JSON, for tests to read.

The simulated chips a board may lack (camera, neopixel, dht, onewire, the SSD1306) are
imported where a part or the firmware needs them, as a board has only its own in flash:
their heap is the instrument's, not the firmware's (the measuring form freezes them, but
an imported module's objects are on the heap all the same)."""

import binascii
import sys

import esp32
import machine
import network

# Reset with the rest once imported (by a part, a driver, the firmware, a test).
_CHIPS = ("camera", "neopixel", "dht", "onewire")


def reset(app_size=0x100000):
    """Power-on state everywhere; `app_size` is each OTA partition's size in bytes."""
    machine.sim_reset()
    esp32.sim_reset(app_size)
    network.sim_reset()
    for name in _CHIPS:
        module = sys.modules.get(name)
        if module is not None:
            module.sim_reset()


def solder(parts):
    """Put a simulated chip where each entry of config.json's "parts" (a list of dicts)
    expects one: an SSD1306 on its I2C bus and address, an SPI LCD on its pins, a DHT on its pin, a DS18B20 on its
    1-Wire pin. Outputs, buttons and ADCs need nothing: the pins are there. Entries the
    firmware would refuse are left alone (it says why)."""
    for entry in parts if isinstance(parts, list) else ():
        if not isinstance(entry, dict):
            continue
        kind, pin = entry.get("type"), entry.get("pin")
        if kind == "oled":
            import simoled

            machine.sim_attach_i2c(entry.get("i2c", 0), entry.get("addr", 0x3C),
                                   simoled.SSD1306(entry.get("width", 128), entry.get("height", 64)))
        elif kind == "lcd":
            import simlcd  # only for a panel: the other boards' simulated share stays as it was
            import simspi

            simspi.attach(simlcd.Panel(
                entry.get("width", 240), entry.get("height", 240), entry.get("x_offset", 0),
                entry.get("y_offset", 0), entry.get("sck"), entry.get("mosi"), entry.get("dc"),
                entry.get("cs")))
        elif kind == "dht" and isinstance(pin, int):
            import dht

            dht.sim_attach(pin)
        elif kind == "ds18b20" and isinstance(pin, int):
            import onewire

            onewire.sim_attach(pin)


# The I2C chips a board module drives on its bus 1, by its PINS' address names: register
# width in bytes (the AW88298's registers are 16 bits).
_BOARD_CHIPS = {"es8311_addr": 1, "axp2101_addr": 1, "aw9523_addr": 1, "aw88298_addr": 2}


def solder_board(module):
    """Put the simulated chips a real board module (boards.esp32_s3_box3, ...) drives onto
    its pins: a blank register chip at each address its PINS names among _BOARD_CHIPS, on
    I2C bus 1, and, where it has a PANEL, an SPI LCD on its lcd_* pins. Returns the panel,
    or None."""
    pins = module.PINS
    for name, width in _BOARD_CHIPS.items():
        if name in pins:
            machine.sim_attach_i2c(1, pins[name], machine.I2CDevice(width=width))
    panel = getattr(module, "PANEL", None)
    if panel is None:
        return None
    import simlcd
    import simspi

    return simspi.attach(simlcd.Panel(
        panel["width"], panel["height"], panel["x_offset"], panel["y_offset"], pins["lcd_sclk"],
        pins["lcd_mosi"], pins["lcd_dc"], pins.get("lcd_cs")))


def snapshot():
    """What the outputs show now, as JSON-ready dicts keyed by pin (as text): output pin
    levels (each Pin's last levels), PWMs (frequency, last duties, pulse width, last
    frequencies set), LED strips (last frames), SSD1306s ("bus:address": on, contrast,
    inverted, size and RAM as hex), SPI LCDs ("dc <pin>": on, awake, inverted, MADCTL,
    COLMOD, pixels written outside the glass, size and the glass's RGB565 pixels as hex)."""
    pins = {}
    for pin, p in machine.sim_pins().items():
        if p.mode != machine.Pin.IN and p.history.count:
            pins[str(pin)] = list(p.history)
    pwm = {}
    for pin, p in machine.sim_pwms().items():
        pwm[str(pin)] = {"freq": p.freq(), "duty_u16": list(p.history), "duty_ns": p.duty_ns(),
                         "freqs": list(p.freqs), "active": p.active}
    strips = {}
    neopixel = sys.modules.get("neopixel")
    for pin, strip in neopixel.sim_strips().items() if neopixel is not None else ():
        strips[str(pin)] = [[list(pixel) for pixel in frame] for frame in strip.frames]
    oleds = {}
    simoled = sys.modules.get("simoled")
    for (bus, addr), device in machine.sim_devices().items() if simoled is not None else ():
        if isinstance(device, simoled.SSD1306):
            oleds["%d:%d" % (bus, addr)] = {
                "on": device.on, "contrast": device.contrast, "inverted": device.inverted,
                "width": device.width, "height": device.height, "ram": binascii.hexlify(device.ram).decode()}
    lcds = {}
    simlcd = sys.modules.get("simlcd")
    for panel in sys.modules["simspi"].devices() if simlcd is not None else ():
        if isinstance(panel, simlcd.Panel):
            lcds["dc %s" % panel.dc] = {
                "on": panel.on, "awake": panel.awake, "inverted": panel.inverted, "madctl": panel.madctl,
                "colmod": panel.colmod, "outside": panel.outside, "width": panel.width,
                "height": panel.height, "ram": binascii.hexlify(panel.ram).decode()}
    return {"pins": pins, "pwm": pwm, "strips": strips, "oleds": oleds, "lcds": lcds}
