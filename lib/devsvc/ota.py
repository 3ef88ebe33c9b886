"""Firmware update into the next OTA app partition, streamed and verified.

install() copies the image into the partition after the running one through a single
4096-byte block buffer (never the whole image in RAM), hashing it with SHA-256 as it
arrives, and checks what ESP-IDF checks of an application image (ImageCheck): the 0xE9
magic and the chip id in the header before anything is written, the size against the
partition (the announced length before the first write), each segment, the checksum
byte, and the SHA-256 ESP-IDF appends when the header's hash_appended is set. With a
given sha256 the whole image must also have that digest. It then reads the partition back
and hashes it again, and calls set_boot() only when everything matched. Any failure
raises OtaError before set_boot(): the device keeps booting the running image, which is
never written. After the new image has booted well, mark_valid() cancels the
bootloader's rollback.
"""

import binascii
import hashlib
import struct
import sys

from umcp.compat import const, get_logger, iscoroutine

_BLOCK = const(4096)
_APP_MAGIC = const(0xE9)  # first byte of every ESP32 application image
_PROGRESS_EVERY = const(65536)
_HEADER = const(24)  # esp_image_header_t
_SEGMENT_HEADER = const(8)  # esp_image_segment_header_t
_MAX_SEGMENTS = const(16)  # ESP_IMAGE_MAX_SEGMENTS
_CHECKSUM_SEED = const(0xEF)
# esp_chip_id_t, as the image header names the chip
CHIP_IDS = {"esp32": 0x0000, "esp32s2": 0x0002, "esp32c3": 0x0005, "esp32s3": 0x0009,
            "esp32c2": 0x000C, "esp32c6": 0x000D, "esp32h2": 0x0010, "esp32p4": 0x0012,
            "esp32c5": 0x0017, "esp32c61": 0x0014}

_log = get_logger("ota")


class OtaError(Exception):
    pass


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
    chip's name or id; None leaves the chip id unchecked. Raises OtaError."""

    def __init__(self, chip=None):
        self.chip = CHIP_IDS.get(chip, chip) if isinstance(chip, str) else chip
        if isinstance(chip, str) and self.chip is chip:
            raise OtaError("unknown chip %s" % chip)
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
                raise OtaError("not an ESP32 application image (first byte 0x%02x, not 0xE9)"
                               % head[0])
            self.segments = head[1]
            if not 0 < self.segments <= _MAX_SEGMENTS:
                raise OtaError("image header names %d segments" % self.segments)
            chip = head[12] | head[13] << 8
            if self.chip is not None and chip != self.chip:
                raise OtaError("image is for chip id 0x%04x, this is 0x%04x (%s)"
                               % (chip, self.chip, _chip_name(self.chip)))
            self.hash_appended = head[23] == 1
            self._stage, self._need = 1, _SEGMENT_HEADER
        elif stage == 1:
            length = struct.unpack("<II", bytes(head))[1]
            if length > 0x1000000:
                raise OtaError("image segment of %d bytes" % length)
            self._segment_done() if length == 0 else self._to(2, length)
        elif stage == 2:
            self._segment_done()
        elif stage == 3:
            if head[-1] != _fold(self._xor) ^ _CHECKSUM_SEED:
                raise OtaError("image checksum mismatch: the image is corrupt")
            self.length = self._pos
            if self.hash_appended:
                self._digest = self._hasher.digest()
                self._to(4, 32)
            else:
                self._to(5, 0)
        elif stage == 4:
            if bytes(head) != self._digest:
                raise OtaError("image SHA-256 mismatch: the image is corrupt")
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
            raise OtaError("image truncated: it ends inside its %s" % (
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


async def install(chunks, sha256=None, size=None, progress=None, partition=None, chip=None):
    """Write the image from the async iterable `chunks` (bytes-like, any sizes).

    sha256: the expected digest as 64 hex digits, or None: then the image must carry its
    own (hash_appended). size: the image length if known (checked against the partition
    before anything is written, and against what arrives); otherwise `chunks.length` (the
    announced Content-Length, once the first chunk came) is used. chip: the running chip
    (name or id) the image must be for; None: running_chip(), unchecked if unknown.
    progress(written, total): called every 64 KiB and at the end, plain or coroutine
    function; total is the size (or None). partition: where to write (default: the next
    update partition). Returns the image length; raises OtaError.
    """
    expected = parse_digest(sha256) if sha256 is not None else None
    if partition is None:
        partition = _next_partition()
    capacity = partition.ioctl(4, 0) * partition.ioctl(5, 0)
    if size is not None and size > capacity:
        raise OtaError("image of %d bytes exceeds the %d-byte partition" % (size, capacity))
    check = ImageCheck(running_chip() if chip is None else chip)
    buf = bytearray(_BLOCK)
    hasher = hashlib.sha256()
    received = fill = block = reported = 0
    try:
        async for chunk in chunks:
            n = len(chunk)
            if received == 0 and size is None:
                size = getattr(chunks, "length", None)  # the announced Content-Length
                if size is not None and size > capacity:
                    raise OtaError("image of %d bytes exceeds the %d-byte partition"
                                   % (size, capacity))
            check.feed(chunk)  # the header is checked before the first block is written
            if received + n > (capacity if size is None else size):
                raise OtaError("image larger than %s" % ("the partition" if size is None
                                                         else "its announced size"))
            hasher.update(chunk)
            data = memoryview(chunk)
            pos = 0
            while pos < n:
                take = min(_BLOCK - fill, n - pos)
                buf[fill:fill + take] = data[pos:pos + take]
                fill += take
                pos += take
                if fill == _BLOCK:
                    _write_block(partition, block, buf)
                    block += 1
                    fill = 0
            received += n
            if progress and received - reported >= _PROGRESS_EVERY:
                reported = received
                await _report(progress, received, size)
        if received == 0:
            raise OtaError("empty image")
        if size is not None and received != size:
            raise OtaError("image truncated: got %d of %d bytes" % (received, size))
        if fill:
            for i in range(fill, _BLOCK):
                buf[i] = 0xFF  # erased flash
            _write_block(partition, block, buf)
        check.finish()
        if expected is None and not check.hash_appended:
            # ESP-IDF boots such an image on its checksum alone; so do we, but say so.
            _log.warning("the image carries no SHA-256 (hash_appended unset): only its "
                         "checksum was verified")
        digest = hasher.digest()  # once: MicroPython's hash objects are final after it
        if expected is None:
            expected = digest  # what was written must read back the same
        elif digest != expected:
            raise OtaError("SHA-256 mismatch: image is %s" % binascii.hexlify(digest).decode())
        if _flash_digest(partition, received, buf) != expected:
            raise OtaError("verification failed: the partition does not hold the image")
        partition.set_boot()
    except OtaError:
        raise
    except Exception as e:  # a failed download or flash write; cancellation passes through
        raise OtaError("update failed: %r" % (e,))
    if progress:
        await _report(progress, received, size)
    return received


def mark_valid():
    """Keep the running image: cancel the bootloader's rollback after a good boot.

    False where there is nothing to do (no esp32 module, no rollback support)."""
    try:
        from esp32 import Partition
        Partition.mark_app_valid_cancel_rollback()
        return True
    except (ImportError, AttributeError, OSError):
        return False


def parse_digest(sha256):
    """The 32-byte digest that `sha256` (64 hex digits) spells; OtaError otherwise.

    install() does this first; a caller may do it earlier to refuse a bad digest at once."""
    try:
        digest = binascii.unhexlify(sha256)
    except (TypeError, ValueError):
        digest = b""
    if len(digest) != 32:
        raise OtaError("sha256 must be 64 hex digits")
    return digest


def _next_partition():
    try:
        from esp32 import Partition
    except ImportError:
        raise OtaError("firmware update needs an ESP32 (no esp32 module)")
    try:
        return Partition(Partition.RUNNING).get_next_update()
    except OSError as e:
        raise OtaError("no OTA partition to write (flash an OTA build): %s" % (e,))


def _write_block(partition, block, buf):
    partition.writeblocks(block, buf)


def _flash_digest(partition, length, buf):
    hasher = hashlib.sha256()
    view = memoryview(buf)
    block = 0
    while length > 0:
        partition.readblocks(block, buf)
        hasher.update(view[:min(length, _BLOCK)])
        length -= _BLOCK
        block += 1
    return hasher.digest()


async def _report(progress, written, total):
    result = progress(written, total)
    if iscoroutine(result):
        await result
