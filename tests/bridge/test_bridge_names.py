"""The bridge's names for devices, tools and resources (no processes)."""

import pytest

from tools.bridge.__main__ import parse_args
from tests.support.toolnames import check_tool_names
from tools.bridge.calls import OWN_TOOLS
from tools.bridge.naming import (MAX_TOOL_NAME, ToolNames, default_alias, from_bridge_uri, guess_alias, parse_aliases,
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


def test_tool_names_are_the_alias_and_the_device_s_name_made_portable():
    assert MAX_TOOL_NAME == 64
    assert tool_name("kitchen", "self.audio_speaker.set_volume") == "kitchen__audio_speaker_set_volume"
    assert tool_name("kitchen", "self.") == "kitchen__self_"  # nothing after the prefix: kept
    assert tool_name("dev-ddeeff", "reboot") == "dev-ddeeff__reboot"
    assert tool_name("lab", "odd:name/x y") == "lab__odd_name_x_y"  # a device of another firmware
    assert guess_alias("kitchen__audio") == "kitchen" and guess_alias("nodot") is None
    assert OWN_TOOLS == ("bridge__list_devices", "bridge__show_panel", "bridge__device_tools")
    check_tool_names(OWN_TOOLS)


def test_every_tool_gets_a_name_clients_accept_and_the_same_one_each_time():
    kitchen = [("kitchen", name) for name in ("self.get_device_status", "self.audio_speaker.set_volume",
                                               "self.a_b", "self.a.b", "get_device_status")]
    # two devices whose tools collide once mapped: kit + chen__lamp.on, kit__chen + self.lamp.on
    colliding = [("kit", "chen__lamp.on"), ("kit__chen", "self.lamp.on")]
    long = [("lab", "self." + "t" * 70), ("lab", "self." + "t" * 69 + "u")]
    own = [("bridge", "list_devices")]  # (an alias no device may take, but it would not win)
    entries = kitchen + colliding + long + own
    names = ToolNames(entries, OWN_TOOLS)
    given = check_tool_names(list(names.names) + list(OWN_TOOLS))
    assert len(given) == len(entries) + len(OWN_TOOLS)  # none left out, none shared
    assert names.of[("kitchen", "self.audio_speaker.set_volume")] == "kitchen__audio_speaker_set_volume"
    for entry in entries:  # each maps back to the device's own name
        assert names.find(names.of[entry]) == entry
    # a name two tools would share: each gets a suffix of its own, 64 characters at most
    for entry in [("kitchen", "self.a_b"), ("kitchen", "self.a.b"), ("kitchen", "self.get_device_status"),
                  ("kitchen", "get_device_status")] + colliding + long + own:
        name = names.of[entry]
        assert name != tool_name(*entry) and len(name) <= 64 and name[-7] == "_", name
    # the same tools in any order, any time: the same names
    again = ToolNames(list(reversed(entries)), OWN_TOOLS)
    assert again.names == names.names
    # a device's names do not depend on another device that does not collide with it
    alone = ToolNames(kitchen, OWN_TOOLS)
    assert all(alone.of[entry] == names.of[entry] for entry in kitchen)
    assert names.find("kitchen__nothing") is None
