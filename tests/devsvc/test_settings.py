"""Settings: defaults, persistence, atomic replacement, corrupt files, the client id."""

import errno
import json
import logging
import os
import re

import pytest

from devsvc import settings as settings_module
from devsvc.settings import DEFAULTS, Settings

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


class Crash(BaseException):
    """Power lost: nothing after this point runs."""


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "settings.json")


def on_disk(path):
    with open(path) as f:
        return json.load(f)


def test_first_boot_uses_defaults_and_keeps_a_new_client_id(path):
    s = Settings(path)
    for key in ("volume", "brightness", "theme", "asset_url", "server_url", "token"):
        assert s.get(key) == DEFAULTS[key]
    assert UUID4.match(s.get("client_id"))
    assert on_disk(path)["client_id"] == s.get("client_id")
    assert s.problem is None


def test_client_id_is_stable_across_reloads_and_unique_per_device(tmp_path, path):
    first = Settings(path).get("client_id")
    assert Settings(path).get("client_id") == first
    assert Settings(str(tmp_path / "other.json")).get("client_id") != first


def test_values_survive_a_reload(path):
    s = Settings(path)
    s.set("volume", 33)
    s.update({"theme": "dark", "asset_url": "http://example.com/a.bin", "custom": [1, 2]})
    again = Settings(path)
    assert again.get("volume") == 33 and again.get("theme") == "dark"
    assert again.get("asset_url") == "http://example.com/a.bin"
    assert again.get("custom") == [1, 2]
    assert again.get("missing", "fallback") == "fallback"


def test_update_saves_once_and_unchanged_values_not_at_all(path, monkeypatch):
    s = Settings(path)
    renames = []
    real_rename = os.rename
    monkeypatch.setattr(settings_module.os, "rename",
                        lambda a, b: (renames.append((a, b)), real_rename(a, b)))
    s.update({"volume": 10, "brightness": 20, "theme": "dark"})
    assert renames == [(path + ".tmp", path)]
    s.set("volume", 10)
    assert len(renames) == 1


def test_crash_between_temp_write_and_rename_leaves_the_old_file(path, monkeypatch):
    s = Settings(path)
    s.set("volume", 40)
    before = on_disk(path)

    def power_cut(src, dst):
        raise Crash()

    monkeypatch.setattr(settings_module.os, "rename", power_cut)
    with pytest.raises(Crash):
        s.set("volume", 90)
    assert on_disk(path) == before  # the old settings, whole
    assert on_disk(path + ".tmp")["volume"] == 90  # the new ones never took over
    monkeypatch.undo()
    again = Settings(path)
    assert again.get("volume") == 40 and again.problem is None
    again.set("volume", 91)
    assert on_disk(path)["volume"] == 91 and not os.path.exists(path + ".tmp")


def fat_rename(real_rename):
    """os.rename as on a FAT volume: an existing destination is refused with EEXIST."""

    def rename(src, dst):
        if os.path.exists(dst):
            raise OSError(errno.EEXIST, "File exists")
        real_rename(src, dst)

    return rename


def test_on_fat_the_old_file_is_removed_before_the_rename(path, monkeypatch):
    monkeypatch.setattr(settings_module.os, "rename", fat_rename(os.rename))
    s = Settings(path)
    s.set("volume", 33)
    assert on_disk(path)["volume"] == 33 and not os.path.exists(path + ".tmp")


def test_on_fat_a_crash_between_remove_and_rename_keeps_the_new_settings(path, monkeypatch):
    Settings(path).set("volume", 20)
    real_rename = os.rename
    refuse_existing = fat_rename(real_rename)

    def power_cut_after_remove(src, dst):
        if os.path.exists(dst):
            refuse_existing(src, dst)  # EEXIST: the old file is removed next
        raise Crash()  # ... and the power goes before the second rename

    monkeypatch.setattr(settings_module.os, "rename", power_cut_after_remove)
    with pytest.raises(Crash):
        Settings(path).set("volume", 60)
    assert not os.path.exists(path) and on_disk(path + ".tmp")["volume"] == 60
    monkeypatch.undo()
    again = Settings(path)  # the next boot finishes the save
    assert again.get("volume") == 60 and again.problem is None
    assert on_disk(path)["volume"] == 60 and not os.path.exists(path + ".tmp")


def test_failed_save_reports_oserror_and_keeps_the_file(path, monkeypatch):
    s = Settings(path)
    before = on_disk(path)

    def full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(settings_module.os, "rename", full)
    with pytest.raises(OSError):
        s.set("theme", "dark")
    assert on_disk(path) == before


@pytest.mark.parametrize("content", [b"{\"volume\": 5", b"\xff\xfe garbage", b"[1, 2]", b""])
def test_corrupt_file_gives_defaults_a_message_and_is_replaced(path, caplog, content):
    with open(path, "wb") as f:
        f.write(content)
    with caplog.at_level(logging.WARNING):
        s = Settings(path)
    assert s.get("volume") == DEFAULTS["volume"]
    assert "using defaults" in s.problem and path in s.problem
    assert any("using defaults" in r.getMessage() for r in caplog.records)
    # The new client id was saved, which replaced the broken file with a good one.
    assert on_disk(path)["client_id"] == s.get("client_id")


def test_values_of_the_wrong_type_are_ignored(path, caplog):
    with open(path, "w") as f:
        json.dump({"volume": "loud", "brightness": 10, "theme": 3, "client_id": "abc"}, f)
    with caplog.at_level(logging.WARNING):
        s = Settings(path)
    assert s.get("volume") == DEFAULTS["volume"] and s.get("theme") == DEFAULTS["theme"]
    assert s.get("brightness") == 10 and s.get("client_id") == "abc"
    assert any("volume" in r.getMessage() for r in caplog.records)


def test_path_is_configurable(tmp_path):
    target = tmp_path / "state" / "device.json"
    target.parent.mkdir()
    Settings(str(target)).set("token", "t0k")
    assert on_disk(str(target))["token"] == "t0k"
