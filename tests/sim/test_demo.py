"""`make sim`, as a user runs it: exit status 0 and a transcript of a real session."""

import json
import re
import subprocess

import pytest

from tests.support import ROOT
from tests.support.simtranscript import check_whole_session


@pytest.mark.timeout(150)
def test_make_sim_prints_a_whole_session():
    # -o: the venv is there already; do not let make try to set it up again.
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "sim"], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    check_whole_session(done.stdout)


@pytest.mark.timeout(150)
def test_make_sim_mqtt_goes_through_the_ota_check_to_an_mqtt_session():
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "sim-mqtt"], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    ota = re.search(r"^ota: (\S+) \(host [^)]*\) checked in: connect over mqtt to 127\.0\.0\.1:\d+$", out, re.M)
    assert ota, out
    device = ota.group(1)
    hello = re.search(r"^%s: connected \(client umcp-[0-9a-f_]+\), hello (\{.*\})$" % re.escape(device), out, re.M)
    assert hello and '"transport":"udp"' in hello.group(1) and '"version":3' in hello.group(1), out
    assert out.index(ota.group(0)) < out.index(hello.group(0))  # the check came first
    assert '-> tools/call self.audio_speaker.set_volume {"volume":30}\n%s: <- true' % device in out
    assert out.rstrip().endswith("demo: done")


@pytest.mark.timeout(150)
def test_make_sim_generic_calls_a_part_of_each_type():
    done = subprocess.run(["make", "--no-print-directory", "-o", ".venv/.installed", "sim-generic"], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert re.search(r"<- initialize: \{\"name\":\"generic\"", out)
    device = re.search(r"^(\S+): connected", out, re.M).group(1)
    for call, answer in [('self.lamp.turn_on {}', 'true'),
                         ('self.arm.set_angle {"angle":90}', 'true'),
                         ('self.panel.show_text {"text":"Hello from umcp"}', '{"lines":["Hello from umcp"]}')]:
        assert '-> tools/call %s\n%s: <- %s' % (call, device, answer) in out, out
    assert re.search(r'<- \{"temperature_c":21\.0,"humidity":45\.0\}', out)
    # The analog sensors read what the demo put on their pins (tools.sim.calls.GENERIC_INPUTS):
    # the light sensor 21000 of 65535 on its 0-1000 lux scale, the battery 3.9 V (67 %).
    light = json.loads(re.search(r"-> tools/call self\.light\.read \{\}\n\S+: <- (\{.*\})", out).group(1))
    assert light == {"value": 320.44, "unit": "lux", "raw": 21000}, out
    battery = json.loads(re.search(r"-> tools/call self\.battery\.get_level \{\}\n\S+: <- (\{.*\})", out).group(1))
    assert battery == {"level": 67, "voltage": 3.9}, out
    assert out.rstrip().endswith("demo: done")
