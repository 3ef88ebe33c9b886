# config.json problems are reported in words a maker can act on (firmware/main.py).
# Runs under pytest and inside MicroPython.
import os
import sys

from umcpfw.app import MAX_MESSAGE_CAP, MAX_MESSAGE_FLOOR, ConfigError, load_config, max_message_for
from umcpfw.bootmore import valid_hostname
from umcpfw.mcphttp import hostname_for

PATH = "test_config_%s.json" % sys.implementation.name


def _problem_with(text):
    if text is None:
        _remove()
    else:
        with open(PATH, "w") as f:
            f.write(text)
    try:
        load_config(PATH)
    except ConfigError as e:
        return str(e)
    finally:
        _remove()
    return None


def _remove():
    try:
        os.remove(PATH)
    except OSError:
        pass


def test_a_good_config_loads():
    with open(PATH, "w") as f:
        f.write('{"board": "host", "url": "ws://h/xiaozhi/v1/", "token": "t"}')
    try:
        assert load_config(PATH)["board"] == "host"
    finally:
        _remove()


def test_each_problem_is_named():
    assert "cannot read" in _problem_with(None)
    assert "not valid JSON" in _problem_with('{"board": "host",')
    assert "one JSON object" in _problem_with('["host"]')
    assert '"board"' in _problem_with('{"url": "ws://h/"}')
    assert '"board"' in _problem_with('{"board": 3}')
    # The whole file's check (umcpfw.configcheck), the one umcp deploy runs on the host
    assert '"wifi" must be an object' in _problem_with('{"board": "host", "wifi": "x"}')
    assert '"parts" must be a list' in _problem_with('{"board": "host", "parts": {"type": "relay"}}')
    assert '"mcp_http" has "auth": "none" and a "token"' in _problem_with(
        '{"board": "host", "mcp_http": {"auth": "none", "token": "t"}}')
    assert '"max_message" must be a whole number' in _problem_with('{"board": "host", "max_message": "16k"}')


def test_a_key_the_firmware_does_not_read_is_no_reason_to_stop():
    from umcpfw.configcheck import check

    with open(PATH, "w") as f:
        f.write('{"board": "host", "tokn": "t", "url": "ws://h/"}')
    try:
        assert load_config(PATH)["tokn"] == "t"  # said in a warning, the start goes on
    finally:
        _remove()
    assert check({"board": "host", "tokn": "t", "colour": 1}) in (["tokn", "colour"], ["colour", "tokn"])


def test_the_message_limit_follows_the_free_heap():
    assert max_message_for(None) == MAX_MESSAGE_CAP  # CPython: no heap figure
    assert max_message_for(48 * 1024) == 6 * 1024  # an eighth, in whole KB
    assert max_message_for(50000) == 6 * 1024
    assert max_message_for(4096) == MAX_MESSAGE_FLOOR
    assert max_message_for(4 * 1024 * 1024) == MAX_MESSAGE_CAP  # PSRAM: the link's default


def test_the_network_name_comes_from_the_device_id():
    # the board answers mDNS as <name>.local: the MAC's end, or the id made a name
    assert hostname_for("24:0a:c4:12:34:56") == "umcp-123456"
    assert hostname_for("240AC4123456") == "umcp-123456"
    assert hostname_for("Kitchen Board #2") == "kitchen-board--2"
    assert hostname_for("--") == "umcp"
    assert len(hostname_for("x" * 80)) == 32
    for name in ("umcp-123456", "kitchen", "a", "A-9"):
        assert valid_hostname(name), name
    for name in ("", "-a", "a-", "a b", "a.local", "x" * 33, None, "é"):
        assert not valid_hostname(name), name


class _Clock:
    """main.time's stand-in: time() is what the test says."""

    def __init__(self):
        self.now = 1000

    def time(self):
        return self.now


def _run_main_failing_after(seconds):
    """main.run() with an application that fails `seconds` after its start: what run()
    returned, or "reset" when it reset the board (hwsim's machine.reset raises)."""
    import machine

    import main
    from umcpfw import app

    clock = _Clock()

    def failing(config):
        clock.now += seconds
        raise RuntimeError("a bug on a rare path")

    saved = app.run, app.load_config, app.time
    app.run, app.load_config, app.time = failing, lambda: {}, clock
    try:
        return main.run()  # umcpfw.app.start, as the board runs it
    except machine.ResetRequested:
        return "reset"
    finally:
        app.run, app.load_config, app.time = saved


def test_a_failure_at_the_start_stays_at_the_repl_and_a_late_one_resets_the_board():
    # A fault at the start would end every next start the same way: no reset loop.
    assert _run_main_failing_after(1) is False
    # After the board ran for a good while, a fresh start is the way back.
    from umcpfw.app import RESTART_AFTER_S

    assert _run_main_failing_after(RESTART_AFTER_S + 1) == "reset"
