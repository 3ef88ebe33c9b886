"""python3 -m tools.sim as a user runs it: the config it writes, signals, failures."""

import asyncio
import json
import os
import signal
import subprocess
import sys

import pytest

from tests.support.firmwareharness import ROOT, Backend, TOKEN, run

pytestmark = pytest.mark.timeout(60)


def sim_command(*args):
    return [sys.executable, "-S", "-m", "tools.sim"] + list(args)


def test_writes_config_and_stops_cleanly_on_sigterm_sigint_and_sighup(tmp_path):
    # SIGHUP: the terminal closed; the board (in a session of its own) must stop too.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        state = tmp_path / signum.name

        async def scenario():
            backend = await Backend().start()
            # python -m tools.sim itself, as a user runs it and signals it
            sim = subprocess.Popen(sim_command("--url", backend.url, "--token", TOKEN, "--state-dir", str(state),
                                               "--max-payload", "1400", "--device-id", "aa:bb:cc:dd:ee:ff",
                                               "--extra-config", json.dumps({"idle_timeout": 60})),
                                   cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            try:
                device = await backend.next_device()
                assert device.headers["Device-Id"] == "aa:bb:cc:dd:ee:ff"
                sim.send_signal(signum)
                assert await asyncio.to_thread(sim.wait, 15) == 0
            finally:
                if sim.poll() is None:
                    sim.kill()
                await backend.stop()
            return backend.url

        url = run(scenario())
        config = json.loads((state / "config.json").read_text())
        assert config["url"] == url
        assert config["token"] == TOKEN
        assert config["board"] == "host"
        assert config["max_payload"] == 1400
        assert config["device_id"] == "aa:bb:cc:dd:ee:ff"
        assert config["idle_timeout"] == 60
        # The firmware's own files live in the state dir too.
        assert (state / "settings.json").exists()
        assert json.loads((state / "hwsim.jsonl").read_text().splitlines()[-1])["reason"] == "stop"


def test_uses_a_temporary_state_dir_when_none_is_given():
    proc = subprocess.Popen(sim_command("--url", "ws://127.0.0.1:9/", "--token", "t"), cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)
    state = None
    try:
        first = proc.stderr.readline()
        assert first.startswith("[sim] state dir ")
        state = first.split("state dir ", 1)[1].strip()
        assert json.load(open(os.path.join(state, "config.json")))["url"] == "ws://127.0.0.1:9/"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
        proc.stderr.close()
    assert not os.path.exists(state)  # the simulator cleans up the directory it made


@pytest.mark.parametrize("args, message", [
    (["--url", "ws://h/", "--token", "t", "--heapsize", "1M"], "--heapsize needs --micropython"),
    (["--url", "ws://h/", "--token", "t", "--mpy"], "--mpy needs --micropython"),
    (["--url", "ws://h/", "--token", "t", "--extra-config", "[1]"], "must be a JSON object"),
    (["--token", "t"], "--url"),
    (["--url", "ws://h/", "--token", "t", "--micropython", "no/such/micropython"],
     "is not an executable"),
    (["--url", "ws://h/", "--token", "t", "--mcp-http-token", "x"], "--mcp-http-token needs --mcp-http"),
])
def test_bad_arguments_are_refused(args, message):
    done = subprocess.run(sim_command(*args), cwd=ROOT, capture_output=True, text=True,
                          timeout=15)
    assert done.returncode == 2
    assert message in done.stderr


def test_a_firmware_that_cannot_start_ends_the_simulator(tmp_path):
    # An unknown board: the firmware fails at boot, and the simulator reports it instead of
    # booting it again and again.
    done = subprocess.run(
        sim_command("--url", "ws://127.0.0.1:9/", "--token", "t", "--board", "nosuch",
                    "--state-dir", str(tmp_path)),
        cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "nosuch" in done.stderr
    assert "firmware exited with status" in done.stderr


@pytest.mark.parametrize("extra, words", [
    ({"tls_verify": "maybe"}, '"tls_verify" must be true or false'),
    ({"wifi": "x"}, 'config.json: "wifi" must be an object'),
    ({"ca": "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n"}, "config.json: "),
    ({"ca": "/no/such/ca.pem"}, "config.json: CA certificate file /no/such/ca.pem cannot be read"),
    # The board's own MCP endpoint: never without a token, and with a port and name that work
    ({"mcp_http": {"port": 8080}}, '"mcp_http" needs a "token"'),
    ({"mcp_http": {"port": 8080, "token": ""}}, '"mcp_http" needs a "token"'),
    ({"mcp_http": "on"}, '"mcp_http" must be an object'),
    ({"mcp_http": {"token": "t", "port": 70000}}, "port must be 1..65535"),
    ({"mcp_http": {"token": "t", "hostname": "my board"}}, "hostname 'my board'"),
    # "auth": "none" (a trusted LAN, Home Assistant) is a choice of its own: never with a token
    ({"mcp_http": {"port": 8080, "auth": "none", "token": "t"}}, '"mcp_http" has "auth": "none" and a "token"'),
    ({"mcp_http": {"port": 8080, "auth": "off"}}, '"mcp_http" auth must be "token" (the default) or "none", not'),
    ({"mcp_http": {"port": 8080, "auth": None, "token": "t"}}, '"mcp_http" auth must be "token"'),
    # The mDNS service record: on or off, on a port that exists
    ({"mcp_http": {"token": "t", "mdns": "yes"}}, '"mcp_http" mdns must be true (the default) or false'),
    ({"mcp_http": {"token": "t", "mdns_port": 0}}, '"mcp_http" mdns_port must be 1..65535, not 0'),
])
def test_a_config_the_firmware_cannot_use_is_reported_in_words(tmp_path, extra, words):
    # Not a traceback: the line `make repl` shows a maker, saying what to fix.
    done = subprocess.run(
        sim_command("--url", "wss://127.0.0.1:9/", "--token", "t", "--state-dir", str(tmp_path),
                    "--extra-config", json.dumps(extra)),
        cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "umcp cannot start: " in done.stdout + done.stderr and words in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
