"""python3 -m tools.bench.transport runs (a few calls each: figures, not asserted)."""

import pytest

from tools.bench import transport

pytestmark = pytest.mark.timeout(120)


def test_transport_bench_prints_both_transports(monkeypatch, capsys):
    monkeypatch.setattr(transport, "ROUNDS", 5)
    monkeypatch.setattr(transport, "_mosquitto", lambda: (None, None))  # make test-mosquitto's
    assert transport.main() == 0
    out = capsys.readouterr().out
    assert "WebSocket (backend direct)" in out and "MQTT (amqtt broker in between)" in out
    assert "floor: bare echo through amqtt" in out and "MQTT / WebSocket, median: amqtt" in out
