"""The bridge's names for devices, tools and resources (no processes)."""

import pytest

from tools.bridge.__main__ import parse_args
from tools.bridge.naming import (MAX_TOOL_NAME, default_alias, from_bridge_uri, parse_aliases, split_tool_name,
                                 to_bridge_uri, tool_name, unique_alias)


def test_default_alias_is_the_end_of_the_mac_or_the_id_made_safe():
    assert default_alias("aa:bb:cc:dd:ee:ff") == "dev-ddeeff"
    assert default_alias("AA-BB-CC-DD-EE-0F") == "dev-ddee0f"
    assert default_alias("aabbccddee01") == "dev-ddee01"
    assert default_alias("my board #2") == "my-board--2"
    assert default_alias("") == "dev"


def test_aliases_from_the_command_line():
    assert parse_aliases(["aa:bb:cc:dd:ee:ff=kitchen", "x=desk_2"]) == {"aa:bb:cc:dd:ee:ff": "kitchen", "x": "desk_2"}
    for bad in (["kitchen"], ["=kitchen"], ["a=kit.chen"], ["a=bridge"], ["a=" + "k" * 49], ["a=x", "b=x"]):
        with pytest.raises(ValueError):
            parse_aliases(bad)
    assert parse_args(["--alias", "aa:bb:cc:dd:ee:ff=kitchen"]).aliases == {"aa:bb:cc:dd:ee:ff": "kitchen"}
    with pytest.raises(SystemExit):
        parse_args(["--alias", "aa:bb=kit/chen"])


@pytest.mark.parametrize("uri, ours", [
    ("device://status", "umcp://kitchen/device/status"),
    ("device://photo/last", "umcp://kitchen/device/photo/last"),
    ("device://log/{line}", "umcp://kitchen/device/log/{line}"),
    ("file:///etc/hosts", "umcp://kitchen/file//etc/hosts"),
    ("urn:umcp:thing", "umcp://kitchen/~/urn:umcp:thing"),
])
def test_resource_uris_round_trip(uri, ours):
    assert to_bridge_uri("kitchen", uri) == ours
    assert from_bridge_uri(ours) == ("kitchen", uri)


def test_uris_that_are_not_ours():
    for uri in ("device://status", "umcp://", "umcp://kitchen", "umcp://kitchen/", "bridge://devices"):
        assert from_bridge_uri(uri) is None


def test_two_devices_that_would_share_an_alias_keep_apart():
    assert unique_alias("aa:bb:cc:dd:ee:ff", "dev-ddeeff", {"bridge"}) == "dev-ddeeff"
    # a second MAC ending alike: its whole id, made name-safe, stays the same across reconnects
    assert unique_alias("11:22:33:dd:ee:ff", "dev-ddeeff", {"bridge", "dev-ddeeff"}) == "112233ddeeff"
    assert unique_alias("11:22:33:dd:ee:ff", "dev-ddeeff", {"dev-ddeeff", "112233ddeeff"}) == "112233ddeeff_"
    assert unique_alias("bridge", "bridge", {"bridge"}) == "bridge_"
    assert unique_alias("###", "---", {"---"}) == "dev"


def test_tool_names_are_the_alias_a_dot_and_the_device_s_name():
    assert tool_name("kitchen", "self.audio_speaker.set_volume") == "kitchen.self.audio_speaker.set_volume"
    assert split_tool_name("kitchen.self.audio_speaker.set_volume") == ("kitchen", "self.audio_speaker.set_volume")
    assert split_tool_name("kitchen") == ("kitchen", "")
    longest = "t" * (MAX_TOOL_NAME - len("kitchen."))
    assert tool_name("kitchen", longest) == "kitchen." + longest
    assert tool_name("kitchen", longest + "t") is None  # over 128 characters: left out
