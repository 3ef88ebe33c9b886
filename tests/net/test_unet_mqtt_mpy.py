"""unet.mqtt under the MicroPython unix port (.venv/bin/micropython): a round trip through
a real broker (amqtt in-process; mosquitto with make test-mosquitto) and a half-open
connection detected within 1.5 x keepalive."""

import asyncio
import socket
import threading
import time

import pytest

from tests.support.mpyclients import run_script

pytestmark = pytest.mark.timeout(90)


def test_micropython_roundtrip(broker):
    [result] = asyncio.run(run_script("mqttclient.py", "roundtrip", broker.port, heapsize="1M"))
    assert result["granted"] == 1
    assert result["received"] == {"mpy/a": "qos0 text", "mpy/b": "qos1 bytes",
                                  "mpy/c": '{"k":"\u00e9"}', "mpy/big": [30720, True]}
    assert result["alive"] and result["closed"]


def test_micropython_half_open():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def silent():
        conn, _ = srv.accept()
        conn.recv(100)  # CONNECT
        conn.sendall(b"\x20\x02\x00\x00")
        end = time.monotonic() + 10
        conn.settimeout(0.2)
        while time.monotonic() < end:  # swallow PINGREQs, never answer
            try:
                if not conn.recv(100):
                    break
            except OSError:
                pass
        conn.close()

    threading.Thread(target=silent, daemon=True).start()
    try:
        [result] = asyncio.run(run_script("mqttclient.py", "halfopen", port))
    finally:
        srv.close()
    print("half-open detected after %s ms (keepalive 2 s)" % result["dead_after_ms"])
    assert 1900 <= result["dead_after_ms"] <= 3000, result  # within 1.5 x keepalive
    assert "no traffic" in result["reason"]
