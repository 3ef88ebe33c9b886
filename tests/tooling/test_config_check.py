"""config.json checked before the board is touched: `umcp deploy` runs the firmware's own
check (lib/umcpfw/configcheck.py, parts.check) on the host, and a mistake is one line
naming the key, exit status 1, nothing compiled and nothing run on the board. The key
table and docs/boards.md#configjson name the same keys."""

import json
import os
import re

import pytest

from tests.support import ROOT
from tools.board import deploy

GOOD = {"wifi": {"ssid": "home", "password": "secret-pw"}, "url": "ws://x:8000/xiaozhi/v1/", "token": "t"}


def deploy_with(tmp_path, capsys, config_text):
    """deploy.main with `config_text` as config.json, on a port nobody has: (status, the
    lines it wrote to stderr, to stdout, whether anything was built)."""
    config = tmp_path / "config.json"
    config.write_text(config_text)
    build = tmp_path / "build"
    status = deploy.main(["--port", str(tmp_path / "no-such-port"), "--board", "generic",
                          "--config", str(config), "--build-dir", str(build)])
    out, err = capsys.readouterr()
    return status, err.splitlines(), out, build.exists()


@pytest.mark.parametrize("config, words", [
    # Valid JSON of the wrong shape
    ([], "config.json must hold one JSON object"),
    ("hello", "config.json must hold one JSON object"),
    (dict(GOOD, wifi="x"), 'config.json: "wifi" must be an object like {"ssid"'),
    (dict(GOOD, wifi={"ssid": 5}), 'config.json: "wifi" ssid must be text, not 5'),
    (dict(GOOD, token=["t"]), 'config.json: "token" must be text'),
    (dict(GOOD, max_payload="8k"), 'config.json: "max_payload" must be a whole number'),
    (dict(GOOD, tls_verify="no"), 'config.json: "tls_verify" must be true or false'),
    (dict(GOOD, mcp_endpoint=42), 'config.json: "mcp_endpoint" must be a ws:// or wss:// URL, or a list of them'),
    (dict(GOOD, wifi_check_interval=0), 'config.json: "wifi_check_interval" must be a number of seconds above 0'),
    # Parts
    (dict(GOOD, parts={"type": "relay"}), 'config.json: "parts" must be a list of objects'),
    (dict(GOOD, parts=[{"type": "lamp", "name": "desk", "pin": 2}]), "config.json parts[0]: unknown type 'lamp'"),
    (dict(GOOD, parts=[{"type": "relay", "name": "lamp", "pin": 2, "inverted": True}]),
     "config.json parts[0] (relay 'lamp'): unknown option 'inverted'"),
    (dict(GOOD, chip="esp99"), "config.json \"chip\" 'esp99' is not one of esp32"),
    # Events (umcpfw.events): one line naming the event and its key
    (dict(GOOD, parts=[{"type": "button", "name": "door", "pin": 0}],
          events=[{"part": "door", "on": "above", "value": 3, "say": "x"}]),
     'config.json events[0] "on": a button\'s is press, long_press or release, not \'above\''),
    (dict(GOOD, events=[{"part": "door", "on": "press", "say": "x"}]),
     'config.json events[0] "part": no part named \'door\' in "parts"'),
    # Options at odds with each other, and values the firmware does not know
    (dict(GOOD, mcp_http={"auth": "none", "token": "t"}), '"mcp_http" has "auth": "none" and a "token"'),
    (dict(GOOD, mcp_http={"auth": "basic", "token": "t"}), '"mcp_http" auth must be "token" (the default) or "none"'),
    (dict(GOOD, mcp_http={"port": 80}), '"mcp_http" needs a "token"'),
    # The tool budget (umcpfw.toolbudget, mcplink.endpoint)
    (dict(GOOD, tools=["self.screen.*"]), 'config.json: "tools" must be an object like {"hide": ["self.screen.*"]}'),
    (dict(GOOD, tools={"hidden": ["self.screen.*"]}), 'config.json: "tools" has no "hidden" (it takes "hide")'),
    (dict(GOOD, tools={"hide": "self.screen.*"}), 'config.json: "tools" hide must be a list of tool names or prefixes'),
    (dict(GOOD, tools={"hide": ["self.*.set"]}),
     'config.json: "tools" hide: \'self.*.set\' is no tool name nor a prefix ending in "*"'),
    (dict(GOOD, links={"xiaozhi": {"tools": []}}), 'config.json: "links" has no "xiaozhi" (it takes "endpoint")'),
    (dict(GOOD, links={"endpoint": ["self.lamp.*"]}), 'config.json: "links" endpoint must be an object like {"tools"'),
    (dict(GOOD, links={"endpoint": {"tools": ["", "self.lamp.*"]}}),
     'config.json: "links" endpoint tools: \'\' is no tool name nor a prefix ending in "*"'),
    (dict(GOOD, links={"endpoint": {"tools": ["self.lamp.*"]}}, mcp_endpoint_tools=["self.lamp."]),
     '"links" endpoint tools and "mcp_endpoint_tools" (its older name) are both set: keep one of them'),
    # A misspelt key is named with the nearest known one
    (dict(GOOD, tokn="t"), 'config.json: unknown key "tokn": did you mean "token"?'),
    (dict(GOOD, ota_ur="http://x/ota/"), 'config.json: unknown key "ota_ur": did you mean "ota_url"?'),
    (dict(GOOD, colour="red"), 'config.json: unknown key "colour" (the keys are in docs/boards.md#configjson)'),
])
def test_a_config_mistake_is_one_line_before_anything_is_compiled(tmp_path, capsys, config, words):
    status, err, out, built = deploy_with(tmp_path, capsys, json.dumps(config))
    assert status == 1
    assert len(err) == 1 and err[0].startswith("deploy: ") and words in err[0], err
    assert "[1/4]" not in out and not built


def test_a_good_config_passes_the_check():
    parts = [{"type": "relay", "name": "lamp", "pin": 2}, {"type": "dht", "name": "room", "pin": 27}]
    for config in (GOOD, dict(GOOD, parts=parts, chip="esp32"), {},
                   dict(GOOD, mcp_http={"auth": "none", "port": 8080}),
                   dict(GOOD, parts=parts, events=[{"part": "room", "on": "below", "value": 16, "ask": "heat"}]),
                   dict(GOOD, tools={"hide": ["self.screen.*", "self.reboot"]},
                        links={"endpoint": {"tools": ["self.lamp.*", "self.alarms.", "*"]}}),
                   dict(GOOD, wifi_setup_after=None, ca=["-----BEGIN CERTIFICATE-----"], tls_verify=True),
                   # a pin the esp32 lacks is the esp32-s3's: the board checks its own chip
                   dict(GOOD, parts=[{"type": "relay", "name": "lamp", "pin": 40}])):
        assert deploy.config_problem(config) is None, config


def test_a_pin_the_named_chip_lacks_is_refused():
    config = dict(GOOD, chip="esp32", parts=[{"type": "relay", "name": "lamp", "pin": 40}])
    assert "GPIO 40 does not exist on the esp32" in deploy.config_problem(config)


def test_invalid_json_is_one_line(tmp_path, capsys):
    status, err, out, built = deploy_with(tmp_path, capsys, '{"wifi": ')
    assert status == 1 and len(err) == 1 and "is not valid JSON" in err[0] and not built


def _config_section():
    """docs/boards.md's config.json section."""
    with open(os.path.join(ROOT, "docs", "boards.md")) as f:
        text = f.read()
    section = text[text.index("\n## config.json\n"):]
    return section[:section.index("\n## ", 1)]


def test_every_config_key_is_documented_in_the_boards_page():
    from umcpfw import configcheck

    documented = set(re.findall(r"`([a-z_]+)`", _config_section()))
    missing = sorted(set(configcheck.KEYS) - documented)
    assert missing == [], "docs/boards.md#configjson does not name %s" % missing


def test_every_key_the_docs_tables_list_is_one_the_firmware_reads():
    from umcpfw import configcheck

    rows = re.findall(r"^\| ((?:`[a-z_]+`(?:, )?)+) \|", _config_section(), re.M)
    listed = {key for row in rows for key in re.findall(r"`([a-z_]+)`", row)}
    assert len(listed) > 20 and sorted(listed - set(configcheck.KEYS)) == []
