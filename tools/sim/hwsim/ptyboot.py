"""The start of the board on a pty (tools/sim/ptyboard.py), run by the MicroPython unix
port as `micropython -i ptyboot.py FOLDER MODE ROMFS [WITHOUT]`: what an ESP32 does
between reset and its REPL. WITHOUT: simulated modules the board lacks ("camera,neopixel":
a stock image has no camera).

It imports the simulated hardware (this folder) while the host's files are still in
reach, so that machine, network, esp32 and the rest are there as an ESP32's C modules
are; then mounts FOLDER alone at / (the board's flash: /boot.py, /main.py, /lib,
/config.json) and the ROMFS partition file, when it holds an image, at /rom. Then it
runs boot.py, and main.py unless MODE is "raw" (a soft reset from the raw REPL skips it,
as on a board). The unix port's REPL follows (-i)."""

import sys

_HARDWARE = ("machine", "network", "esp32", "camera", "neopixel", "dht", "onewire", "ds18x20",
             "hwsim", "siminputs", "simlcd", "simoled", "simspi", "simhistory")


class _Rom:
    """vfs with rom_ioctl, the calls `mpremote romfs` makes: one partition held in a
    bytearray, written through to the file `name` in the host's folder `host`."""

    def __init__(self, real, host, name, data):
        self._real = real
        self._host = host
        self._name = name
        self._data = data

    def __getattr__(self, name):
        return getattr(self._real, name)

    def rom_ioctl(self, op, *args):
        if op == 1:  # how many partitions
            return 1
        if args[0] != 0:
            return -19  # ENODEV
        if op == 2:  # the partition itself
            return memoryview(self._data)
        if op == 3:  # prepare (erase) for writing: (length,) or (offset, length)
            offset, length = (0, args[1]) if len(args) == 2 else (args[1], args[2])
            for at in range(offset, min(offset + length, len(self._data))):
                self._data[at] = 0xFF
            return 4  # the smallest write
        if op == 4:  # write (offset, buffer)
            self._data[args[1]:args[1] + len(args[2])] = args[2]
            return 0
        if op == 5:  # writing done: kept in the host's file, for the next start
            self._real.mount(self._real.VfsPosix(self._host), "/.host")
            try:
                with open("/.host/" + self._name, "wb") as f:
                    f.write(self._data)
            finally:
                self._real.umount("/.host")
            return 0
        if op == 6:  # block size (an ESP32 flash sector)
            return 4096
        return -22  # EINVAL


def _start(folder, mode, romfs, without=""):
    for name in _HARDWARE:
        if name not in without.split(","):
            __import__(name)
    try:
        import vfs
    except ImportError:  # MicroPython before 1.23
        import os as vfs
    with open(romfs, "rb") as f:
        data = bytearray(f.seek(0, 2))
        f.seek(0)
        f.readinto(data)
    host, _, name = romfs.rpartition("/")
    vfs.umount("/")
    vfs.mount(vfs.VfsPosix(folder), "/")
    sys.modules["vfs"] = _Rom(vfs, host or "/", name, data)
    import os

    os.chdir("/")
    sys.path[:] = ["", ".frozen", "/lib"]
    if data[:3] == b"\xd2\xcd\x31":  # a ROMFS image: mounted, its packages found as on a board
        vfs.mount(vfs.VfsRom(memoryview(data)), "/rom")
        sys.path[2:2] = ["/rom", "/rom/lib"]
    for name in ("boot.py", "main.py") if mode != "raw" else ("boot.py",):
        _run(name, globals())


def _run(name, scope):
    """A file of the board's / run as MicroPython's pyexec_file runs it, in the REPL's
    globals; an exception it ends with is printed, and the REPL follows."""
    try:
        with open(name) as f:
            source = f.read()
    except OSError:
        return
    try:
        exec(compile(source, name, "exec"), scope)
    except SystemExit:
        raise
    except BaseException as e:  # Ctrl-C in main.py among them: the REPL follows, as on a board
        sys.print_exception(e)


_start(*sys.argv[1:5])
del _start, _run, _Rom, _HARDWARE  # the REPL's globals are the board's, as after a reset
