"""What make sim's transcript must show (tests/sim/test_demo.py; `umcp sim`'s too:
tests/tooling/test_wheel.py): one whole session of the host board, at the backend and
again at its MCP endpoint."""

import re


def check_whole_session(out):
    device = re.search(r"^(\S+): connected \(client [0-9a-f-]+\), hello \{\"type\":\"hello\"", out, re.M)
    assert device, out
    assert re.search(r"answered hello, session [0-9a-f]{32}$", out, re.M)
    assert re.search(r"-> initialize protocolVersion 2024-11-05, vision http://127\.0\.0\.1:\d+/mcp/vision/explain",
                     out)
    assert re.search(r"<- initialize: \{\"name\":\"host\"", out)
    pages = re.findall(r"^%s: <- tools/list page: (\d+) tools" % re.escape(device.group(1)), out, re.M)
    assert len(pages) >= 2 and "last page" in out
    assert re.search(r"ready: %d tools" % sum(map(int, pages)), out)
    assert '-> tools/call self.audio_speaker.set_volume {"volume":30}\n%s: <- true' % device.group(1) in out
    assert '"audio_speaker":{"volume":30}' in out
    assert re.search(r"vision: \S+ uploaded a JPEG image of \d+ bytes, \d+x\d+ pixels", out)
    assert re.search(r'<- \{"success":true,"action":"RESPONSE","response":"I received a JPEG image', out)
    assert "disconnected" in out and out.rstrip().endswith("demo: done")
    # The same board at the backend's MCP endpoint, told after the xiaozhi session.
    assert re.search(r"MCP endpoint for tool providers at ws://127\.0\.0\.1:\d+/mcp_endpoint/mcp/\?token=<the token>$",
                     out, re.M)
    told = out.index("demo: the same board at the backend's MCP endpoint")
    provider = "endpoint:" + device.group(1)
    endpoint_lines = [line for line in out.splitlines() if line.startswith(provider + ":")]
    assert endpoint_lines and all(out.index(line) > told for line in endpoint_lines)
    assert endpoint_lines[0].startswith(provider + ": connected to the MCP endpoint (umcp/")
    assert provider + ": -> initialize protocolVersion 2024-11-05\n" in out  # no vision offered there
    assert "%s: ready: %d tools" % (provider, sum(map(int, pages))) in out  # the same tools
    assert '-> tools/call self.audio_speaker.set_volume {"volume":45}\n%s: <- true' % provider in out
    assert '"audio_speaker":{"volume":45}' in out.split("demo: read the status over the xiaozhi link")[1]
