"""Firmware update into the next OTA app partition, streamed and verified.

install() copies the image into the partition after the running one through a single
4096-byte block buffer (never the whole image in RAM), hashing it with SHA-256 as it
arrives, and checks what ESP-IDF checks of an application image (espimage.ImageCheck): the 0xE9
magic and the chip id in the header before anything is written, the size against the
partition (the announced length before the first write), each segment, the checksum
byte, and the SHA-256 ESP-IDF appends when the header's hash_appended is set. With a
given sha256 the whole image must also have that digest. It then reads the partition back
and hashes it again, and calls set_boot() only when everything matched. Any failure
raises UpgradeError before set_boot(): the device keeps booting the running image, which is
never written. After the new image has booted well, mark_valid() cancels the
bootloader's rollback.
"""

import binascii
import hashlib

from umcp.compat import const, get_logger, iscoroutine

from . import mark_valid  # (devsvc's: a boot calls it without this module; upgrade.mark_valid works)

_BLOCK = const(4096)
_PROGRESS_EVERY = const(65536)
_log = get_logger("ota")


class UpgradeError(Exception):
    pass


async def install(chunks, sha256=None, size=None, progress=None, partition=None, chip=None):
    """Write the image from the async iterable `chunks` (bytes-like, any sizes).

    sha256: the expected digest as 64 hex digits, or None: then the image must carry its
    own (hash_appended). size: the image length if known (checked against the partition
    before anything is written, and against what arrives); otherwise `chunks.length` (the
    announced Content-Length, once the first chunk came) is used. chip: the running chip
    (name or id) the image must be for; None: running_chip(), unchecked if unknown.
    progress(written, total): called every 64 KiB and at the end, plain or coroutine
    function; total is the size (or None). partition: where to write (default: the next
    update partition). Returns the image length; raises UpgradeError.
    """
    expected = parse_digest(sha256) if sha256 is not None else None
    if partition is None:
        partition = _next_partition()
    capacity = partition.ioctl(4, 0) * partition.ioctl(5, 0)
    if size is not None and size > capacity:
        raise UpgradeError("image of %d bytes exceeds the %d-byte partition" % (size, capacity))
    from devsvc import espimage  # only while an upgrade runs (heap)

    buf = bytearray(_BLOCK)
    hasher = hashlib.sha256()
    received = fill = block = reported = 0
    try:
        check = espimage.ImageCheck(espimage.running_chip() if chip is None else chip)
        async for chunk in chunks:
            n = len(chunk)
            if received == 0 and size is None:
                size = getattr(chunks, "length", None)  # the announced Content-Length
                if size is not None and size > capacity:
                    raise UpgradeError("image of %d bytes exceeds the %d-byte partition"
                                       % (size, capacity))
            check.feed(chunk)  # the header is checked before the first block is written
            if received + n > (capacity if size is None else size):
                raise UpgradeError("image larger than %s" % ("the partition" if size is None
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
            raise UpgradeError("empty image")
        if size is not None and received != size:
            raise UpgradeError("image truncated: got %d of %d bytes" % (received, size))
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
            raise UpgradeError("SHA-256 mismatch: image is %s" % binascii.hexlify(digest).decode())
        if _flash_digest(partition, received, buf) != expected:
            raise UpgradeError("verification failed: the partition does not hold the image")
        partition.set_boot()
    except UpgradeError:
        raise
    except espimage.ImageError as e:  # what ESP-IDF would refuse to boot
        raise UpgradeError(str(e))
    except Exception as e:  # a failed download or flash write; cancellation passes through
        raise UpgradeError("update failed: %r" % (e,))
    if progress:
        await _report(progress, received, size)
    return received


def parse_digest(sha256):
    """The 32-byte digest that `sha256` (64 hex digits) spells; UpgradeError otherwise.

    install() does this first; a caller may do it earlier to refuse a bad digest at once."""
    try:
        digest = binascii.unhexlify(sha256)
    except (TypeError, ValueError):
        digest = b""
    if len(digest) != 32:
        raise UpgradeError("sha256 must be 64 hex digits")
    return digest


def _next_partition():
    try:
        from esp32 import Partition
    except ImportError:
        raise UpgradeError("firmware update needs an ESP32 (no esp32 module)")
    try:
        return Partition(Partition.RUNNING).get_next_update()
    except OSError as e:
        raise UpgradeError("no OTA partition to write (flash an OTA build): %s" % (e,))


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
