"""What the Wi-Fi setup tests share (tests/firmware/test_wifi_setup.py over a plain HTTP client,
test_wifi_setup_lost.py, test_wifi_setup_browser.py in headless Chromium): the generic board's
config.json for the mode, the setup page's loopback port, a request to it, the state
directory's config.json and hwsim-network.json, and the board's log."""

import asyncio
import contextlib
import html
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request

from tests.support.firmwareharness import Backend, Sim

STATUS_OLED = {"type": "oled", "name": "panel", "sda": 21, "scl": 22, "status": True}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup_config(port, **more):
    config = {"board": "generic", "parts": [STATUS_OLED], "wifi_setup_port": port,
              "wifi_setup_bind": "127.0.0.1"}
    config.update(more)
    return config


@contextlib.asynccontextmanager
async def setup_board(state_dir, micropython, port, **config):
    """The generic board with setup_config(port, **config), against a scripted backend:
    yields (backend, sim); the simulator must then stop cleanly (status 0)."""
    backend = await Backend().start()
    sim = Sim(backend.url, state_dir, micropython=micropython, extra_config=setup_config(port, **config)).start()
    try:
        yield backend, sim
    finally:
        assert sim.stop() == 0
        await backend.stop()


def http(method, url, form=None):
    """(status, body text) of one request; the page answers 400 with the form."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


async def page_up(url, sim):
    """The setup page's first answer (the board boots into the mode)."""
    for _ in range(200):
        try:
            return await asyncio.to_thread(http, "GET", url)
        except OSError:
            assert sim.running, "the simulator ended"
            await asyncio.sleep(0.1)
    raise AssertionError("the setup page never answered")


def read_config(state_dir):
    with open(os.path.join(str(state_dir), "config.json")) as f:
        return json.load(f)


def surroundings(state_dir, **around):
    """hwsim-network.json, written whole and renamed over the old: the board never reads
    half of it."""
    path = os.path.join(str(state_dir), "hwsim-network.json")
    with open(path + ".new", "w") as f:
        json.dump(around, f)
    os.replace(path + ".new", path)


def log_count(sim, words):
    with open(sim.log_path, errors="replace") as f:
        return f.read().count(words)


async def logged(sim, words, times=1):
    """Wait until the board's log says `words` `times` times (a hang guard: the test's
    timeout ends a board that never does)."""
    while log_count(sim, words) < times:
        assert sim.running, "the simulator ended"
        await asyncio.sleep(0.05)


def refused(url):
    try:
        http("GET", url)
    except OSError:
        return True
    return False


async def answer_and_join(url, backend, ssid, password="correct horse", **more):
    """A good answer posted to the setup page (`more`: other fields, a token): the page says
    the board joins `ssid` (shown escaped), and the board restarts onto it and reaches
    `backend` over it. The device."""
    status, page = await asyncio.to_thread(http, "POST", url, dict(
        {"ssid": ssid, "password": password, "url": backend.url}, **more))
    assert status == 200 and "joins <b>%s</b>" % html.escape(ssid) in page
    device = await backend.next_device()  # after the restart, over the new network
    await device.initialize()
    assert (await device.call_json("self.get_device_status"))["network"]["ssid"] == ssid
    return device


async def rejoin_when_back(state_dir, url, backend, ssid, config):
    """The configured network `ssid` back while the setup page waits unanswered: the board
    restarts onto it and reaches `backend`, the page is gone and config.json is still
    `config`. The device."""
    surroundings(state_dir)  # back, nobody answered the page
    device = await backend.next_device()  # the restart, onto the configured network
    await device.initialize()
    assert (await device.call_json("self.get_device_status"))["network"]["ssid"] == ssid
    assert refused(url)
    assert read_config(state_dir) == config
    return device
