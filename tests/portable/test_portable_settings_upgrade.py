# Settings and OTA logic: runs under pytest and inside MicroPython (unix port and the
# WebAssembly build, whose in-memory filesystem has open, rename and remove).
import hashlib
import json
import os

import esp32
import hwsim
from devsvc import espimage, upgrade
from devsvc.settings import Settings
from devsvc.settingsload import uuid4
from portable_support import ChunkStream, esp_image, raises

_BLOCK = 4096


def _fresh_path():
    return "/tmp/umcp-settings-%s.json" % uuid4()[:8]


def _remove(*paths):
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass


def _image(size):
    return esp_image(size)  # a valid ESP32-S3 application image, SHA-256 appended


def test_settings_persist_and_keep_client_id():
    path = _fresh_path()
    try:
        first = Settings(path)
        assert first.problem is None  # a first boot, not a broken file
        client_id = first.get("client_id")
        assert len(client_id) == 36 and client_id[14] == "4"
        first.update({"volume": 12, "theme": "dark"})
        again = Settings(path)
        assert again.get("client_id") == client_id
        assert again.get("volume") == 12 and again.get("theme") == "dark"
    finally:
        _remove(path, path + ".tmp")


def test_settings_corrupt_file_gives_defaults_then_is_replaced():
    path = _fresh_path()
    try:
        with open(path, "w") as f:
            f.write("{not json")
        s = Settings(path)
        assert s.problem and s.get("volume") == 70
        with open(path) as f:
            assert json.loads(f.read())["client_id"] == s.get("client_id")
    finally:
        _remove(path, path + ".tmp")


def test_settings_unreadable_file_is_a_problem_not_a_first_boot():
    path = _fresh_path()
    os.mkdir(path)  # something is there, but it cannot be read as a file
    try:
        s = Settings(path)
        assert s.problem and path in s.problem and s.get("volume") == 70
    finally:
        os.rmdir(path)


def _digest(data):
    return "".join("%02x" % b for b in hashlib.sha256(data).digest())


async def test_upgrade_good_image_then_set_boot():
    hwsim.reset(8 * _BLOCK)
    data = _image(2 * _BLOCK + 10)
    seen = []
    n = await upgrade.install(ChunkStream(data), _digest(data), len(data),
                          lambda done, total: seen.append(done))
    assert n == len(data) and seen == [len(data)]
    assert esp32.sim_partition("ota_1").writes == [0, 1, 2]
    assert esp32.sim_partition("ota_1").read(0, len(data)) == data
    assert esp32.sim_set_boot_calls() == ["ota_1"]
    assert esp32.sim_partition("ota_0").writes == []


async def _fails(stream, sha256, size=None):
    """The UpgradeError's message, after checking nothing was booted or overwritten."""
    try:
        await upgrade.install(stream, sha256, size)
    except upgrade.UpgradeError as e:
        assert esp32.sim_set_boot_calls() == [] and esp32.sim_partition("ota_0").writes == []
        return str(e)
    raise AssertionError("install() succeeded")


async def test_upgrade_failures_never_set_boot():
    hwsim.reset(4 * _BLOCK)
    data = _image(3 * _BLOCK)
    assert "SHA-256 mismatch" in await _fails(ChunkStream(data), _digest(data + b"!"))
    assert "exceeds" in await _fails(ChunkStream(data), _digest(data), 5 * _BLOCK)
    assert "larger" in await _fails(ChunkStream(_image(5 * _BLOCK)), _digest(_image(5 * _BLOCK)))
    assert "update failed" in await _fails(ChunkStream(data, fail_at=_BLOCK), _digest(data),
                                           len(data))
    assert "64 hex digits" in await _fails(ChunkStream(data), "not a digest")
    hwsim.reset(4 * _BLOCK)
    bad = bytearray(data)
    bad[200] ^= 1
    assert "checksum mismatch" in await _fails(ChunkStream(bytes(bad)), None)
    assert raises(espimage.ImageError, espimage.ImageCheck("esp32s3").feed, esp_image(_BLOCK, chip_id=5))


async def test_upgrade_url_only_image_checked_the_way_esp_idf_does():
    hwsim.reset(8 * _BLOCK)
    data = esp_image(3 * _BLOCK + 7)
    check = espimage.ImageCheck("esp32s3")
    for i in range(0, len(data), 333):
        check.feed(data[i:i + 333])
    check.finish()
    assert check.hash_appended and check.segments == 3 and check.trailing == 7
    assert await upgrade.install(ChunkStream(data), None, chip="esp32s3") == len(data)
    assert esp32.sim_set_boot_calls() == ["ota_1"]
