"""tools.bench.fleet (make bench) runs end to end on a small fleet: every device ready and
every call answered, through each broker and over WebSocket. Figures only: no time is
asserted."""

import re
import subprocess
import sys

import pytest

from tests.support import ROOT

pytestmark = pytest.mark.timeout(240)


def run_fleet(brokers, devices=6):
    proc = subprocess.run([sys.executable, "-m", "tools.bench.fleet", "--devices", str(devices), "--brokers", brokers],
                          cwd=ROOT, capture_output=True, text=True, timeout=220)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def row(table, label):
    line = next(line for line in table.splitlines() if line.startswith(label))
    return re.findall(r"\d+ of \d+", line)


def test_a_small_fleet_is_ready_and_answers_over_amqtt_and_websocket():
    table = run_fleet("embedded,websocket")
    assert row(table, "devices ready") == ["6 of 6", "6 of 6"]
    assert row(table, "failed calls") == ["0 of 6", "0 of 6"]
    assert "floor: bare echo round trip p50" in table and "backend memory per device" in table


@pytest.mark.mosquitto
@pytest.mark.mosquitto
def test_a_small_fleet_through_mosquitto():
    table = run_fleet("mosquitto")
    assert row(table, "devices ready") == ["6 of 6"]
    assert row(table, "failed calls") == ["0 of 6"]
