"""make flash PORT=... CHIP=esp32|esp32s3 FIRMWARE=micropython.bin

Erases the chip and writes a MicroPython image with esptool at the offset the chip's
bootloader layout needs. UMCP_ESPTOOL (or --esptool) names the esptool program.
"""

import argparse
import os
import shlex
import subprocess
import sys

from tools.board.deploy import beside_python

# Where the MicroPython image starts: after the second-stage bootloader on the original
# ESP32 (and S2), at 0 on the newer chips whose ROM finds the bootloader itself.
OFFSETS = {"esp32": "0x1000", "esp32s2": "0x1000", "esp32s3": "0", "esp32c3": "0", "esp32c6": "0"}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tools.board.flash", description=__doc__.split("\n")[0])
    parser.add_argument("--port", required=True, help="serial port, e.g. /dev/ttyUSB0")
    parser.add_argument("--chip", required=True, choices=sorted(OFFSETS))
    parser.add_argument("--firmware", required=True, help="MicroPython .bin for this chip")
    parser.add_argument("--baud", type=int, default=460800)
    parser.add_argument("--esptool", default=os.environ.get("UMCP_ESPTOOL") or beside_python("esptool"),
                        help="esptool command (env UMCP_ESPTOOL)")
    parser.add_argument("--no-erase", action="store_true", help="keep the flash (and its files) as it is")
    return parser.parse_args(argv)


def commands(args):
    """The esptool command lines, in order."""
    base = shlex.split(args.esptool) + ["--chip", args.chip, "-p", args.port, "-b", str(args.baud)]
    steps = [] if args.no_erase else [("erasing the flash", base + ["erase-flash"])]
    steps.append(("writing %s at %s" % (args.firmware, OFFSETS[args.chip]),
                  base + ["write-flash", OFFSETS[args.chip], args.firmware]))
    return steps


def main(argv=None):
    args = parse_args(argv)
    if not args.firmware or not os.path.isfile(args.firmware):
        sys.stderr.write("flash: no firmware image %r: download the MicroPython .bin for %s from "
                         "https://micropython.org/download/ and pass FIRMWARE=path\n" % (args.firmware, args.chip))
        return 2
    steps = commands(args)
    for number, (title, command) in enumerate(steps, 1):
        print("[%d/%d] %s: %s" % (number, len(steps), title, " ".join(command)), flush=True)
        try:
            status = subprocess.call(command)  # esptool prints its own progress bar
        except FileNotFoundError:
            sys.stderr.write("flash: %s not found: run `make setup` or set UMCP_ESPTOOL\n" % command[0])
            return 2
        if status != 0:
            sys.stderr.write("flash: esptool failed (status %d) while %s\n" % (status, title))
            return status
    print("flash: done; now `make deploy PORT=%s BOARD=...`" % args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
