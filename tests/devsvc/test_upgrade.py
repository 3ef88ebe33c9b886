"""OTA: streamed block writes into the next partition, digest checks, the ESP-IDF image
checks (magic, chip id, segments, checksum, appended SHA-256) that let an upgrade come
with a url alone, failures that keep the running image, progress, and the new image
marked valid after the reset. Images are built here (portable_support.esp_image), in the
layout esptool's elf2image writes; esptool itself validates the builder's output."""

import hashlib
import os
import sys

import pytest

import esp32
import hwsim
import machine
from devsvc import espimage, upgrade
from portable_support import ChunkStream, esp_image

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(10)]

BLOCK = 4096


@pytest.fixture(autouse=True)
def power_on():
    hwsim.reset()


def image(size):
    """A valid ESP32-S3 application image of `size` bytes, with its SHA-256 appended."""
    return esp_image(size)


def digest(data):
    return hashlib.sha256(data).hexdigest()


def untouched():
    """Nothing written to the running image and the boot choice unchanged."""
    return (esp32.sim_partition("ota_0").writes == [] and esp32.sim_set_boot_calls() == []
            and esp32.Partition(esp32.Partition.BOOT).info()[4] == "ota_0")


async def test_good_image_goes_block_by_block_into_the_next_partition_then_boots():
    data = image(3 * BLOCK + 123)
    progress = []
    written = await upgrade.install(ChunkStream(data), digest(data), size=len(data),
                                progress=lambda done, total: progress.append((done, total)))
    assert written == len(data)
    target = esp32.sim_partition("ota_1")
    assert target.writes == [0, 1, 2, 3]
    assert target.read(0, len(data)) == data
    assert target.read(len(data), 4 * BLOCK - len(data)) == b"\xff" * (4 * BLOCK - len(data))
    assert esp32.sim_set_boot_calls() == ["ota_1"]
    assert esp32.sim_partition("ota_0").writes == []
    assert progress == [(len(data), len(data))]
    # The reset boots the new image, which then cancels the rollback.
    with pytest.raises(machine.ResetRequested):
        machine.reset()
    assert esp32.Partition(esp32.Partition.RUNNING).info()[4] == "ota_1"
    assert upgrade.mark_valid() is True and esp32.sim_marked_valid()


async def test_progress_every_64k_and_at_the_end_with_coroutine_callback():
    data = image(200 * 1024 + 5)
    seen = []

    async def report(done, total):
        seen.append((done, total))

    await upgrade.install(ChunkStream(data, chunk=4000), digest(data).upper(), progress=report)
    assert [done // 65536 for done, _ in seen[:-1]] == [1, 2, 3]
    assert all(total is None for _, total in seen)
    assert seen[-1] == (len(data), None)


async def test_wrong_digest_never_boots():
    data = image(2 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="SHA-256 mismatch"):
        await upgrade.install(ChunkStream(data), digest(data + b"x"))
    assert untouched()


async def test_announced_oversize_is_refused_before_writing():
    hwsim.reset(app_size=4 * BLOCK)
    data = image(4 * BLOCK + 1)
    with pytest.raises(upgrade.UpgradeError, match="exceeds"):
        await upgrade.install(ChunkStream(data), digest(data), size=len(data))
    assert esp32.sim_partition("ota_1").writes == [] and untouched()


async def test_an_unknown_chip_name_is_an_upgrade_error():
    data = esp_image(3 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="unknown chip esp99"):
        await upgrade.install(ChunkStream(data), None, chip="esp99")
    assert esp32.sim_partition("ota_1").writes == [] and untouched()


async def test_unannounced_oversize_stops_at_the_partition_end():
    hwsim.reset(app_size=4 * BLOCK)
    data = image(5 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="larger than the partition"):
        await upgrade.install(ChunkStream(data), digest(data))
    assert untouched()


async def test_more_data_than_announced_is_refused():
    data = image(2 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="announced size"):
        await upgrade.install(ChunkStream(data), digest(data), size=BLOCK)
    assert untouched()


async def test_stream_error_midway_never_boots():
    data = image(5 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="connection reset"):
        await upgrade.install(ChunkStream(data, fail_at=3 * BLOCK), digest(data), size=len(data))
    assert untouched()


async def test_truncated_and_empty_images_never_boot():
    data = image(3 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="truncated"):
        await upgrade.install(ChunkStream(data[:BLOCK]), digest(data), size=len(data))
    with pytest.raises(upgrade.UpgradeError, match="empty"):
        await upgrade.install(ChunkStream(b""), digest(b""))
    assert untouched()


async def test_a_file_that_is_no_app_image_is_refused_at_the_first_block():
    data = b"<html>" + bytes(3 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="not an ESP32 application image"):
        await upgrade.install(ChunkStream(data), digest(data))
    assert esp32.sim_partition("ota_1").writes == [] and untouched()


@pytest.mark.parametrize("bad", ["", "abc", "zz" * 32, "00" * 31, 42])  # None: url-only
async def test_malformed_sha256_is_refused(bad):
    with pytest.raises(upgrade.UpgradeError, match="64 hex digits"):
        await upgrade.install(ChunkStream(image(10)), bad)
    assert untouched()


async def test_flash_that_does_not_keep_the_data_is_caught_by_the_read_back():
    class BadFlash:
        """The next partition, with one bit that will not program."""

        def __init__(self):
            self.part = esp32.Partition(esp32.Partition.RUNNING).get_next_update()

        def writeblocks(self, block, buf):
            if block == 1:
                buf = bytearray(buf)
                buf[100] ^= 0x01
            self.part.writeblocks(block, buf)

        def __getattr__(self, name):
            return getattr(self.part, name)

    data = image(2 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="verification failed"):
        await upgrade.install(ChunkStream(data), digest(data), partition=BadFlash())
    assert untouched()


async def test_without_esp32_module_update_fails_clearly_and_mark_valid_is_a_no_op(monkeypatch):
    monkeypatch.setitem(sys.modules, "esp32", None)
    with pytest.raises(upgrade.UpgradeError, match="esp32"):
        await upgrade.install(ChunkStream(image(10)), digest(image(10)))
    assert upgrade.mark_valid() is False


# -- url-only upgrades: what ESP-IDF checks of the image


class Announced(ChunkStream):
    """A download whose Content-Length is known once the first chunk arrived."""

    def __init__(self, data, length, **kwargs):
        super().__init__(data, **kwargs)
        self.length = length


async def test_url_only_image_verified_by_its_appended_sha256():
    data = image(3 * BLOCK + 100)
    written = await upgrade.install(ChunkStream(data, chunk=777), None, chip="esp32s3")
    assert written == len(data) and esp32.sim_set_boot_calls() == ["ota_1"]
    assert esp32.sim_partition("ota_1").read(0, len(data)) == data


@pytest.mark.parametrize("where,error", [
    (300, "checksum mismatch"),  # a byte of segment data
    (-1, "SHA-256 mismatch"),  # the appended digest itself
])
async def test_corrupt_url_only_image_never_boots(where, error):
    data = bytearray(esp_image(3 * BLOCK, hash_appended=True))
    data[where] ^= 0x40
    with pytest.raises(upgrade.UpgradeError, match=error):
        await upgrade.install(ChunkStream(bytes(data)), None)
    assert untouched()


async def test_image_for_another_chip_is_refused_before_writing():
    data = esp_image(3 * BLOCK, chip_id=0x0000)  # an ESP32 image on an ESP32-S3
    with pytest.raises(upgrade.UpgradeError, match="chip id 0x0000, this is 0x0009"):
        await upgrade.install(ChunkStream(data), None, chip="esp32s3")
    assert esp32.sim_partition("ota_1").writes == [] and untouched()
    # The chip of the running board comes from the platform where it says so.
    assert espimage.running_chip() in (None, "esp32", "esp32s3", "esp32c3")


async def test_announced_content_length_over_the_partition_is_refused_before_writing():
    hwsim.reset(app_size=4 * BLOCK)
    data = image(6 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="exceeds the 16384-byte partition"):
        await upgrade.install(Announced(data, len(data)), None)
    assert esp32.sim_partition("ota_1").writes == [] and untouched()


async def test_truncated_url_only_image_never_boots():
    data = image(3 * BLOCK)
    with pytest.raises(upgrade.UpgradeError, match="truncated: it ends inside its segments"):
        await upgrade.install(ChunkStream(data[:2 * BLOCK]), None)
    assert untouched()


async def test_bad_header_fields_are_refused():
    data = bytearray(image(2 * BLOCK))
    data[1] = 0  # no segments
    with pytest.raises(upgrade.UpgradeError, match="names 0 segments"):
        await upgrade.install(ChunkStream(bytes(data)), None)
    assert untouched()


async def test_image_without_appended_hash_boots_on_its_checksum_or_a_given_sha256():
    data = esp_image(2 * BLOCK, hash_appended=False)
    assert await upgrade.install(ChunkStream(data), None) == len(data)
    hwsim.reset()
    assert await upgrade.install(ChunkStream(data), digest(data)) == len(data)


async def test_a_given_sha256_still_pins_a_valid_image():
    data = image(2 * BLOCK)
    other = esp_image(2 * BLOCK, seed=11)
    with pytest.raises(upgrade.UpgradeError, match="SHA-256 mismatch: image is"):
        await upgrade.install(ChunkStream(other), digest(data))
    assert untouched()


def test_the_image_builder_matches_esptool(tmp_path):
    import subprocess

    path = tmp_path / "app.bin"
    path.write_bytes(esp_image(20000))
    esptool = os.path.join(os.path.dirname(sys.executable), "esptool")
    out = subprocess.run([esptool, "--chip", "esp32s3", "image-info", str(path)],
                         capture_output=True, text=True, timeout=60).stdout
    assert "Checksum: " in out and "(valid)" in out.split("Checksum: ")[1].splitlines()[0], out
    assert "Validation hash: " in out and "(valid)" in out.split("Validation hash: ")[1].splitlines()[0]
