"""What ESP-IDF checks of an application image before it boots it, on a stream.

Image layout (esp_image_format.h; esptool's elf2image writes it): a 24-byte header (magic
0xE9, segment count, SPI mode/speed/size, entry address, ..., chip id at bytes 12-13,
hash_appended at byte 23), then each segment as an 8-byte header (load address, length)
and its data, zero padding so that the checksum byte is the last of a 16-byte row (0xEF
XOR every data byte), then, when hash_appended is 1, the SHA-256 of everything before it.
Imported by devsvc.upgrade only while an upgrade runs.
"""

import hashlib
import struct
import sys

from umcp.compat import const, get_logger

_log = get_logger("upgrade")

_APP_MAGIC = const(0xE9)  # first byte of every ESP32 application image
_HEADER = const(24)  # esp_image_header_t
_SEGMENT_HEADER = const(8)  # esp_image_segment_header_t
_MAX_SEGMENTS = const(16)  # ESP_IMAGE_MAX_SEGMENTS
_CHECKSUM_SEED = const(0xEF)
# esp_chip_id_t, as the image header names the chip
CHIP_IDS = {"esp32": 0x0000, "esp32s2": 0x0002, "esp32c3": 0x0005, "esp32s3": 0x0009,
            "esp32c2": 0x000C, "esp32c6": 0x000D, "esp32h2": 0x0010, "esp32p4": 0x0012,
            "esp32c5": 0x0017, "esp32c61": 0x0014}


class ImageError(ValueError):
    """The image is not one ESP-IDF would boot; the message says what is wrong."""


def running_chip():
    """The name of the chip this runs on ("esp32s3"...), from the platform; None if unknown."""
    machine = (getattr(sys.implementation, "_machine", "") or "").upper().replace("-", "")
    best = None
    for name in CHIP_IDS:
        if machine.find(name.upper()) >= 0 and (best is None or len(name) > len(best)):
            best = name
    return best


class ImageCheck:
    """Checks an ESP32 application image as it streams by (feed(), then finish()), the way
    ESP-IDF's esp_image_verify does: header (magic, segment count, chip id), segments,
    checksum byte, and the appended SHA-256 when hash_appended is set. chip: the running
    chip's name or id; None leaves the chip id unchecked. Raises ImageError."""

    def __init__(self, chip=None):
        self.chip = CHIP_IDS.get(chip, chip) if isinstance(chip, str) else chip
        if isinstance(chip, str) and self.chip is chip:
            raise ImageError("unknown chip %s" % chip)
        self.hash_appended = False
        self.segments = 0
        self.length = 0  # bytes that belong to the image (header to appended digest)
        self._stage = 0  # 0 header, 1 segment header, 2 segment data, 3 checksum, 4 digest, 5 end
        self._need = _HEADER
        self._head = bytearray()
        self._seen = 0  # segments read
        self._xor = 0  # XOR of all segment data, as one big integer (folded at the end)
        self._hasher = hashlib.sha256()  # of the image up to its appended digest
        self._pos = 0
        self.trailing = 0  # bytes after the image

    def feed(self, data):
        data = memoryview(data)
        n = len(data)
        i = 0
        while i < n:
            if self._stage == 5:
                self.trailing += n - i
                return
            take = min(self._need, n - i)
            piece = data[i:i + take]
            if self._stage == 2:
                # XOR as integers of at most 256 bytes: fast, and no big blocks to
                # fragment the heap (the position of a byte does not matter to a XOR).
                for j in range(0, take, 256):
                    self._xor ^= int.from_bytes(piece[j:j + 256], "big")
            else:
                self._head.extend(piece)
            if self._stage != 4:
                self._hasher.update(piece)
            self._need -= take
            self._pos += take
            i += take
            if not self._need:
                self._advance()

    def _advance(self):
        head = self._head
        stage = self._stage
        self._head = bytearray()
        if stage == 0:
            if head[0] != _APP_MAGIC:
                raise ImageError("not an ESP32 application image (first byte 0x%02x, not 0xE9)"
                                 % head[0])
            self.segments = head[1]
            if not 0 < self.segments <= _MAX_SEGMENTS:
                raise ImageError("image header names %d segments" % self.segments)
            chip = head[12] | head[13] << 8
            if self.chip is not None and chip != self.chip:
                raise ImageError("image is for chip id 0x%04x, this is 0x%04x (%s)"
                                 % (chip, self.chip, _chip_name(self.chip)))
            self.hash_appended = head[23] == 1
            self._stage, self._need = 1, _SEGMENT_HEADER
        elif stage == 1:
            length = struct.unpack("<II", bytes(head))[1]
            if length > 0x1000000:
                raise ImageError("image segment of %d bytes" % length)
            self._segment_done() if length == 0 else self._to(2, length)
        elif stage == 2:
            self._segment_done()
        elif stage == 3:
            if head[-1] != _fold(self._xor) ^ _CHECKSUM_SEED:
                raise ImageError("image checksum mismatch: the image is corrupt")
            self.length = self._pos
            if self.hash_appended:
                self._digest = self._hasher.digest()
                self._to(4, 32)
            else:
                self._to(5, 0)
        elif stage == 4:
            if bytes(head) != self._digest:
                raise ImageError("image SHA-256 mismatch: the image is corrupt")
            self.length = self._pos
            self._to(5, 0)

    def _to(self, stage, need):
        self._stage, self._need = stage, need

    def _segment_done(self):
        self._seen += 1
        if self._seen < self.segments:
            self._to(1, _SEGMENT_HEADER)
        else:  # padding up to the checksum byte, the last of a 16-byte row
            self._to(3, 16 - self._pos % 16)

    def finish(self):
        if self._stage != 5:
            raise ImageError("image truncated: it ends inside its %s" % (
                "header", "segment headers", "segments", "checksum", "appended SHA-256")[self._stage])
        if self.trailing:
            _log.info("%d bytes after the image (a signature block?) not checked", self.trailing)


def _fold(value):
    """XOR of all bytes of a non-negative integer."""
    result = 0
    while value:
        result ^= value & 0xFF
        value >>= 8
    return result


def _chip_name(chip_id):
    for name in CHIP_IDS:
        if CHIP_IDS[name] == chip_id:
            return name
    return "unknown"
