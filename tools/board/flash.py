"""make flash PORT=... CHIP=esp32|esp32s3 FIRMWARE=micropython.bin

Erases the chip and writes a MicroPython image with esptool at the offset the chip's
bootloader layout needs. UMCP_ESPTOOL (or --esptool) names the esptool program.

--romfs (make flash ROMFS=1) makes sure the image's partition table has a ROMFS partition
(data, subtype 0x8f, label "romfs": the esp32 port looks the label up) for `make deploy
ROMFS=1`; the image must come from a MicroPython built with MICROPY_VFS_ROM (stock ESP32
images are not; deploy's probe tells). An image whose table has no such partition is
copied to <image>-romfs.bin with ROMFS_SIZE bytes taken from the end of its "vfs"
partition, and that copy is flashed. (mp-image-tool-esp32, the
PyPI tool for editing these tables, knows only the app, ota, nvs, phy and fat subtypes, so
the table is edited here: ESP-IDF's binary format, entries then an MD5 record.)
"""

import argparse
import hashlib
import os
import shlex
import struct
import subprocess
import sys

from ..paths import beside_python, hint, module_prog

# Where the MicroPython image starts: after the second-stage bootloader on the original
# ESP32 (and S2), at 0 on the newer chips whose ROM finds the bootloader itself.
OFFSETS = {"esp32": "0x1000", "esp32s2": "0x1000", "esp32s3": "0", "esp32c3": "0", "esp32c6": "0"}

TABLE_AT = 0x8000  # flash offset of the partition table (ESP-IDF's default)
TABLE_MAX = 0xC00
ENTRY = struct.Struct("<2sBBLL16sL")  # magic, type, subtype, offset, size, label, flags
ENTRY_MAGIC = b"\xaa\x50"
MD5_MAGIC = b"\xeb\xeb"
DATA, ROMFS_SUBTYPE = 1, 0x8F
ROMFS_SIZE = 0x40000  # 256 KB: the whole lib/ compiled is about 50 KB


class TableError(Exception):
    pass


def read_table(image, base):
    """The partition entries of a merged image written at flash offset `base`:
    [(type, subtype, offset, size, label, flags)]."""
    start = TABLE_AT - base
    if len(image) < start + ENTRY.size:
        raise TableError("the image holds no partition table (is it the merged .bin from micropython.org?)")
    entries = []
    for at in range(start, start + TABLE_MAX, ENTRY.size):
        magic, kind, subtype, offset, size, label, flags = ENTRY.unpack_from(image, at)
        if magic != ENTRY_MAGIC:
            break
        entries.append((kind, subtype, offset, size, label.rstrip(b"\0").decode(), flags))
    if not entries:
        raise TableError("no partition table at 0x%x in the image" % TABLE_AT)
    return entries


def table_bytes(entries):
    """ESP-IDF's binary partition table: the entries, an MD5 record over them, 0xFF padding."""
    body = b"".join(ENTRY.pack(ENTRY_MAGIC, kind, subtype, offset, size, label.encode(), flags)
                    for kind, subtype, offset, size, label, flags in entries)
    body += MD5_MAGIC + b"\xff" * 14 + hashlib.md5(body).digest()
    return body + b"\xff" * (TABLE_MAX - len(body))


def has_romfs(entries):
    return any(kind == DATA and subtype == ROMFS_SUBTYPE for kind, subtype, *_ in entries)


def with_romfs(entries, size=ROMFS_SIZE):
    """The entries with a "romfs" partition carved from the end of "vfs"."""
    vfs = [e for e in entries if e[4] == "vfs" and e[0] == DATA]
    if not vfs:
        raise TableError("the image has no vfs partition to take the ROMFS partition from")
    kind, subtype, offset, vfs_size, label, flags = vfs[0]
    if vfs_size < 2 * size:
        raise TableError("the vfs partition (%d KB) is too small to give %d KB to ROMFS" % (vfs_size // 1024, size // 1024))
    shrunk = (kind, subtype, offset, vfs_size - size, label, flags)
    romfs = (DATA, ROMFS_SUBTYPE, offset + vfs_size - size, size, "romfs", 0)
    return sorted([shrunk if e is vfs[0] else e for e in entries] + [romfs], key=lambda e: e[2])


def romfs_image(path, chip):
    """The image to flash for ROMFS: `path` itself when its table has a ROMFS partition,
    else a copy with one (written beside it); TableError when neither can be."""
    base = int(OFFSETS[chip], 16)
    with open(path, "rb") as f:
        image = bytearray(f.read())
    entries = read_table(image, base)
    if has_romfs(entries):
        return path
    start = TABLE_AT - base
    image[start:start + TABLE_MAX] = table_bytes(with_romfs(entries))
    out = os.path.splitext(path)[0] + "-romfs.bin"
    with open(out, "wb") as f:
        f.write(image)
    return out


def parse_args(argv=None, prog=module_prog("board.flash")):
    parser = argparse.ArgumentParser(prog=prog, description="Erase a board and write a MicroPython image "
                                     "with esptool.")
    parser.add_argument("--port", required=True, help="serial port, e.g. /dev/ttyUSB0")
    parser.add_argument("--chip", required=True, choices=sorted(OFFSETS))
    parser.add_argument("--firmware", required=True, help="MicroPython .bin for this chip")
    parser.add_argument("--baud", type=int, default=460800)
    parser.add_argument("--esptool", default=os.environ.get("UMCP_ESPTOOL") or beside_python("esptool"),
                        help="esptool command (env UMCP_ESPTOOL)")
    parser.add_argument("--no-erase", action="store_true", help="keep the flash (and its files) as it is")
    parser.add_argument("--romfs", action="store_true",
                        help="flash an image with a ROMFS partition (added to a copy if it has none)")
    return parser.parse_args(argv)


def commands(args):
    """The esptool command lines, in order."""
    base = shlex.split(args.esptool) + ["--chip", args.chip, "-p", args.port, "-b", str(args.baud)]
    steps = [] if args.no_erase else [("erasing the flash", base + ["erase-flash"])]
    steps.append(("writing %s at %s" % (args.firmware, OFFSETS[args.chip]),
                  base + ["write-flash", OFFSETS[args.chip], args.firmware]))
    return steps


def main(argv=None, prog=module_prog("board.flash")):
    args = parse_args(argv, prog)
    if not args.firmware or not os.path.isfile(args.firmware):
        sys.stderr.write("flash: no firmware image %r: download the MicroPython .bin for %s from "
                         "https://micropython.org/download/ and pass %s\n"
                         % (args.firmware, args.chip, hint("FIRMWARE=path", "--firmware PATH")))
        return 2
    if args.romfs:
        try:
            image = romfs_image(args.firmware, args.chip)
        except (TableError, OSError, struct.error) as e:
            sys.stderr.write("flash: cannot give %s a ROMFS partition: %s\n" % (args.firmware, e))
            return 2
        if image != args.firmware:
            if args.no_erase:
                sys.stderr.write("flash: adding a ROMFS partition moves the file system's end: "
                                 "flash without --no-erase\n")
                return 2
            print("flash: %s has no ROMFS partition; flashing %s, which has %d KB of it taken from vfs"
                  % (args.firmware, image, ROMFS_SIZE // 1024), flush=True)
            args.firmware = image
    steps = commands(args)
    for number, (title, command) in enumerate(steps, 1):
        print("[%d/%d] %s: %s" % (number, len(steps), title, " ".join(command)), flush=True)
        try:
            status = subprocess.call(command)  # esptool prints its own progress bar
        except FileNotFoundError:
            sys.stderr.write("flash: %s not found: %s or set UMCP_ESPTOOL\n"
                             % (command[0], hint("run `make setup`", "install umcp again")))
            return 2
        if status != 0:
            sys.stderr.write("flash: esptool failed (status %d) while %s\n" % (status, title))
            return status
    print("flash: done; now `%s`" % (hint("make deploy PORT=%s BOARD=...", "umcp deploy --port %s --board ...")
                                     % args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
