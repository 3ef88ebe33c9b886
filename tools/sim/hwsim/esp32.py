"""Simulated `esp32` module: two OTA app partitions in memory, and the MCU temperature.

The flash holds ota_0 (running at power-on) and ota_1. Blocks are stored only once written
(unwritten flash reads as erased, 0xFF), so a large partition costs no memory until used.
Each partition records the last block numbers written (`sim_partition(label).writes`) and
set_boot() calls are recorded in `sim_set_boot_calls()` (both simhistory.History: bounded,
with `.count` of all). machine.reset() calls `sim_boot()`, which
does what the bootloader does: run the partition chosen with set_boot().

`sim_reset(app_size=...)` puts the module back to a fresh flash.
"""

from simhistory import History

_BLOCK_SIZE = 4096
BLOCKS_KEPT = 64  # block numbers kept per partition (an image of 256 KB writes 64)
BOOTS_KEPT = 16
_APP_MAGIC = 0xE9  # first byte of every ESP32 application image
_ENOENT = 2


class _Flash:
    def __init__(self, label, subtype, addr, size):
        self.label = label
        self.subtype = subtype
        self.addr = addr
        self.size = size
        self.blocks = {}  # block number -> bytearray(4096)
        self.writes = History(BLOCKS_KEPT)  # the last block numbers given to writeblocks()

    def block(self, n):
        if not 0 <= n < self.size // _BLOCK_SIZE:
            raise OSError(22)  # EINVAL: outside the partition, as the IDF refuses it
        if n not in self.blocks:
            self.blocks[n] = bytearray(b"\xff" * _BLOCK_SIZE)
        return self.blocks[n]

    def read(self, offset, n):
        """`n` bytes from `offset` (for tests comparing what was flashed)."""
        out = bytearray(b"\xff" * n)  # one buffer: a growing one fragments the heap
        done = 0
        while done < n:
            pos = offset + done
            data = self.blocks.get(pos // _BLOCK_SIZE)
            take = min(n - done, _BLOCK_SIZE - pos % _BLOCK_SIZE)
            if data is not None:
                out[done:done + take] = data[pos % _BLOCK_SIZE:pos % _BLOCK_SIZE + take]
            done += take
        return out


class Partition:
    BOOT = 0
    RUNNING = 1
    TYPE_APP = 0
    TYPE_DATA = 1

    def __init__(self, id, block_size=_BLOCK_SIZE):
        if id == Partition.BOOT:
            self._flash = _state["boot"]
        elif id == Partition.RUNNING:
            self._flash = _state["running"]
        else:
            self._flash = _by_label(id)
        self._block_size = block_size

    def info(self):
        f = self._flash
        return (Partition.TYPE_APP, f.subtype, f.addr, f.size, f.label, False)

    def readblocks(self, block_num, buf, offset=0):
        start = block_num * self._block_size + offset
        buf[:] = self._flash.read(start, len(buf))

    def writeblocks(self, block_num, buf, offset=None):
        start = block_num * self._block_size
        if offset is None:
            # Like the ESP32 port: without an offset whole blocks are erased, then written.
            if len(buf) % _BLOCK_SIZE:
                raise OSError(22)
            for i in range(0, len(buf), _BLOCK_SIZE):
                self._flash.block((start + i) // _BLOCK_SIZE)[:] = buf[i:i + _BLOCK_SIZE]
        else:
            for i in range(len(buf)):
                pos = start + offset + i
                data = self._flash.block(pos // _BLOCK_SIZE)
                data[pos % _BLOCK_SIZE] &= buf[i]  # unerased flash can only clear bits
        self._flash.writes.append(block_num)

    def ioctl(self, cmd, arg):
        if cmd == 4:
            return self._flash.size // self._block_size
        if cmd == 5:
            return self._block_size
        if cmd == 6:
            self._flash.block(arg)[:] = b"\xff" * _BLOCK_SIZE
        return 0

    def set_boot(self):
        # The IDF verifies the image before accepting it; the magic byte stands in for that.
        if self._flash.read(0, 1)[0] != _APP_MAGIC:
            raise OSError(0x1503)  # ESP_ERR_OTA_VALIDATE_FAILED
        _state["boot"] = self._flash
        _state["set_boot_calls"].append(self._flash.label)

    def get_next_update(self):
        flash = _state["flash"]
        return Partition(flash[(flash.index(self._flash) + 1) % len(flash)].label)

    @staticmethod
    def mark_app_valid_cancel_rollback():
        _state["marked_valid"] = True


def mcu_temperature():
    return _state["temperature"]


def _by_label(label):
    for f in _state["flash"]:
        if f.label == label:
            return f
    raise OSError(_ENOENT)


# --- simulation control (not part of MicroPython's esp32) ---

def sim_reset(app_size=0x100000):
    """A fresh flash: ota_0 running and booting, ota_1 empty, each `app_size` bytes."""
    global _state
    ota_0 = _Flash("ota_0", 0x10, 0x10000, app_size)
    ota_1 = _Flash("ota_1", 0x11, 0x10000 + app_size, app_size)
    _state = {"flash": [ota_0, ota_1], "running": ota_0, "boot": ota_0,
              "set_boot_calls": History(BOOTS_KEPT), "marked_valid": False, "temperature": 42.0}


def sim_partition(label):
    """The storage behind a partition: .blocks, .writes, .read(offset, n), .size."""
    return _by_label(label)


def sim_set_boot_calls():
    return _state["set_boot_calls"]


def sim_marked_valid():
    return _state["marked_valid"]


def sim_boot():
    """What the bootloader does at reset: run the partition set_boot() chose."""
    _state["running"] = _state["boot"]
    _state["marked_valid"] = False


def sim_set_temperature(celsius):
    _state["temperature"] = celsius


sim_reset()
