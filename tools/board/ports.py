"""Serial ports: which are there, and one line for a port that is not.

Deploy, repl, doctor and `bridge --serial` ask port_problem() before they compile or
start anything, so that a missing board is said at once instead of through mpremote's
"it may be in use by another program" some seconds later."""

import os

# mpremote's own shortcuts (u0 = /dev/ttyUSB0, a0 = /dev/ttyACM0, c0 = COM0).
SHORTCUTS = tuple(kind + str(n) for kind in "uac" for n in range(4))
_SHORTCUT_DEVICES = {"u": "/dev/ttyUSB%s", "a": "/dev/ttyACM%s", "c": "COM%s"}


def serial_ports():
    """The serial ports of this computer, each as (device, description), sorted."""
    from serial.tools import list_ports

    found = []
    for port in list_ports.comports():
        description = port.description if port.description not in (None, "", "n/a") else ""
        found.append((port.device, description))
    return sorted(found)


def describe_ports(ports):
    """The ports as one phrase: "/dev/ttyUSB0 (CP2102 USB to UART), /dev/ttyACM0"."""
    return ", ".join("%s (%s)" % (device, what) if what and what != device else device
                     for device, what in ports)


def _device_of(port):
    """The device a port argument names, or None for one no file stands for (a pyserial URL,
    mpremote's `auto`)."""
    if port in SHORTCUTS:
        return _SHORTCUT_DEVICES[port[0]] % port[1:]
    if "://" in port or port == "auto":
        return None
    return port


def port_problem(port, ports=None):
    """None when `port` can be opened as far as the host can tell; else one line that names
    it and lists the serial ports that are there.

    port: a device path (/dev/ttyUSB0, COM3), an mpremote shortcut (u0, a0, c0), `auto`
    or a pyserial URL (socket://..., rfc2217://...; never refused here).
    ports: the ports to list (default: serial_ports())."""
    device = _device_of(port)
    if device is None and port != "auto":
        return None
    if ports is None:
        ports = serial_ports()
    if device is None:  # auto: mpremote takes the first USB serial port
        if ports:
            return None
        return "no serial port found for `auto`: is the board plugged in (and its USB driver installed)?"
    if os.path.exists(device) or any(device.upper() == found.upper() for found, _ in ports):
        return None
    if ports:
        return "no serial port %s; the serial ports here: %s" % (device, describe_ports(ports))
    return "no serial port %s, and none here at all: is the board plugged in (and its USB driver installed)?" % device
