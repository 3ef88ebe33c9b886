"""The bridge's names for devices, tools and resources (no processes)."""

import pytest

from tools.bridge.__main__ import parse_args
from tools.bridge.bridge import default_alias, from_bridge_uri, parse_aliases, to_bridge_uri


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
