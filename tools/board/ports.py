"""Serial ports: which are there, and one line for a port that is not.

Deploy, repl, doctor and `bridge --serial` ask port_problem() before they compile or
start anything, so that a missing board is said at once instead of through mpremote's
"it may be in use by another program" some seconds later. Deploy waits with
wait_for_restart() for the board it reset."""

import os
import time

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


def wait_for_restart(port, timeout=3.0, quiet=0.3):
    """Read `port` after a reset until the board has started again: its ROM's "rst:" line
    (or a soft reboot's), then `quiet` seconds without output; at most `timeout` seconds.

    Bytes sent while a board restarts are lost, so a command that follows the reset too
    soon (mpremote's Ctrl-C) would wait for a raw REPL that main.py never gives. A port
    that goes while the chip restarts (native USB) is opened again. Returns whether the
    restart was seen (never for `auto` or a URL)."""
    device = _device_of(port)
    if device is None:
        return False
    import serial

    deadline = time.monotonic() + timeout
    seen, restarted, last = b"", False, 0.0
    while time.monotonic() < deadline:
        try:
            with serial.serial_for_url(device, baudrate=115200, timeout=0.05) as line:
                while time.monotonic() < deadline:
                    data = line.read(256)
                    now = time.monotonic()
                    if data:
                        seen, last = seen[-16:] + data, now  # a sign may straddle two reads
                        restarted = restarted or b"rst:" in seen or b"soft reboot" in seen
                    elif restarted and now - last >= quiet:
                        return True
        except (OSError, serial.SerialException):
            time.sleep(0.05)
    return restarted
