"""Working with a real board: `deploy` (make deploy), `flash` (make flash), `repl`
(make repl), thin, checked wrappers around mpremote and esptool; `doctor` (umcp doctor:
the serial ports, and what a board has and lacks); `ports` (which serial ports are
there); `roots` writes the CA roots the firmware ships (lib/unet/roots.py) from Debian's ca-certificates; `qemu` runs
the QEMU board (a MicroPython on a pty, outside the repository) for the tests and make
bench."""
