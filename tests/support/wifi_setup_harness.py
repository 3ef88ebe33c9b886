"""What the Wi-Fi setup tests share (tests/firmware/test_wifi_setup.py over a plain HTTP client,
test_wifi_setup_browser.py in headless Chromium): the generic board's config.json for the
mode, the setup page's loopback port, a request to it, and the state directory's config.json."""

import asyncio
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request

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
            assert sim.proc.poll() is None, "the simulator ended"
            await asyncio.sleep(0.1)
    raise AssertionError("the setup page never answered")


def read_config(state_dir):
    with open(os.path.join(str(state_dir), "config.json")) as f:
        return json.load(f)
