"""Working with a real board: `deploy` (make deploy), `flash` (make flash), `repl`
(make repl), thin, checked wrappers around mpremote and esptool; `roots` writes the CA
roots the firmware ships (lib/unet/roots.py) from Debian's ca-certificates; `ports`
lists the serial ports and says which one is missing; `doctor` (umcp doctor) what a board
has and lacks."""
