"""The local backend playing the MCP endpoint (MCP 接入点, tools/hub/endpoint.py): tool
providers connect out to ws://HOST:PORT/mcp_endpoint/mcp/?token=T and are listed and
called like devices. From the command line (python -m tools.backend, python -m tools.sim
--mcp-endpoint), in process, and with a scripted provider that is no umcp board (as
78/mcp-calculator's mcp_pipe.py is)."""

import asyncio
import contextlib
import json
import queue
import re
import signal
import subprocess
import sys
import threading

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.backend.test_backend import TOKEN, WAIT, running_backend
from tests.support import ROOT
from tests.support.firmwareharness import FAST_LINK
from tools.hub.endpoint import PATH

pytestmark = [pytest.mark.timeout(90)]
ES8311_DAC_VOLUME = 0x32


class Lines:
    """A child process's output, read on a thread, waited for line by line."""

    def __init__(self, stream):
        self.lines = []
        self._queue = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream):
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern, timeout=WAIT):
        """The first line from now on matching `pattern` (a regex): its match."""
        deadline = timeout
        while True:
            try:
                line = self._queue.get(timeout=deadline)
            except queue.Empty:
                raise AssertionError("no line matching %r in:\n%s" % (pattern, "\n".join(self.lines)))
            if line is None:
                raise AssertionError("ended without %r:\n%s" % (pattern, "\n".join(self.lines)))
            self.lines.append(line)
            match = re.search(pattern, line)
            if match:
                return match


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_from_the_command_line_the_board_appears_in_the_console_and_a_call_sets_the_codec(tmp_path):
    backend = subprocess.Popen(
        [sys.executable, "-m", "tools.backend", "--host", "127.0.0.1", "--port", "0", "--http-port", "0",
         "--token", TOKEN, "--no-console"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, bufsize=1)
    sim = None
    try:
        out = Lines(backend.stdout)
        port = out.wait_for(r"MCP endpoint for tool providers at ws://127\.0\.0\.1:(\d+)/mcp_endpoint/mcp/"
                            r"\?token=<the token>$").group(1)
        url = "ws://127.0.0.1:%s/mcp_endpoint/mcp/?token=%s" % (port, TOKEN)
        state = tmp_path / "state"
        with open(tmp_path / "sim.log", "w") as log:
            sim = subprocess.Popen([sys.executable, "-m", "tools.sim", "--mcp-endpoint", url, "--state-dir",
                                    str(state), "--extra-config", json.dumps(FAST_LINK)],
                                   cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        board = out.wait_for(r"^(endpoint:\S+): ready: (\d+) tools$").group(1)
        backend.stdin.write("devices\n")
        listed = out.wait_for(r"^1\. %s  session [0-9a-f]{32}  host \S+  \d+ tools  \(MCP endpoint\)$"
                              % re.escape(board))
        backend.stdin.write('call %s self.audio_speaker.set_volume {"volume": 42}\n' % board)
        answer = out.wait_for(r"^%s: <- (.*)$" % re.escape(board)).group(1)
        backend.stdin.write("call 1 self.get_device_status\n")
        status = json.loads(out.wait_for(r"^%s: <- (\{.*)$" % re.escape(board)).group(1))
        stop(sim)
        with open(state / "hwsim.jsonl") as f:
            record = json.loads(f.read().splitlines()[-1])
    finally:
        if sim is not None:
            stop(sim)
        stop(backend)
    assert listed and answer == "true" and status["audio_speaker"]["volume"] == 42
    transcript = "\n".join(out.lines)
    assert "%s: -> initialize protocolVersion 2024-11-05\n" % board in transcript + "\n"  # no vision offered
    assert TOKEN not in transcript
    # The simulated codec got the register esp_codec_dev's curve gives volume 42 (98 + v,
    # tests/drivers/test_drivers.py).
    writes = [value for reg, value in record["es8311_writes"] if reg == ES8311_DAC_VOLUME]
    assert writes[-1] == 98 + 42


# ---- in process, with providers of our own making


@contextlib.asynccontextmanager
async def provider(backend, answer, token=TOKEN, headers=None):
    """A tool provider that is no umcp board (as mcp_pipe.py is): plain JSON-RPC at the
    endpoint, answering each request with answer(request) (None: silence). Yields what it
    received and its connection."""
    received = []
    url = "ws://127.0.0.1:%d%s?token=%s" % (backend.port, PATH, token)
    async with connect(url, additional_headers=headers or {}) as ws:

        async def serve():
            async for text in ws:
                message = json.loads(text)
                received.append(message)
                result = answer(message) if "id" in message else None
                if result is not None:
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}))

        task = asyncio.create_task(serve())
        try:
            yield received, ws
        finally:
            task.cancel()


CALCULATOR = {"name": "calculator", "description": "Evaluate a Python expression",
              "inputSchema": {"type": "object", "properties": {"python_expression": {"type": "string"}},
                              "required": ["python_expression"]}}


def calculator(message):
    method = message["method"]
    if method == "initialize":
        return {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "Calculator", "version": "1.9.4"}}
    if method == "tools/list":
        return {"tools": [CALCULATOR]}
    if method == "tools/call":
        expression = message["params"]["arguments"]["python_expression"]
        return {"content": [{"type": "text", "text": json.dumps({"success": True, "result": eval(expression)})}]}
    return {}


@pytest.mark.anyio
async def test_a_provider_without_device_id_is_named_after_its_token_and_called_with_string_ids():
    async with running_backend() as (backend, out):
        async with provider(backend, calculator) as (received, _):
            device = await backend.wait_ready(WAIT)
            result = await backend.call(device, "calculator", {"python_expression": "6*7"})
            other = backend.front.endpoint_url
    assert re.fullmatch(r"endpoint:agent-[0-9a-f]{8}", device.id)
    assert device.transport == "mcp_endpoint" and device.server_info == {"name": "Calculator", "version": "1.9.4"}
    assert [m["method"] for m in received] == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    ids = [m["id"] for m in received if "id" in m]
    assert all(re.fullmatch(r"[0-9a-f]{8}_n_\d+", i) for i in ids) and len(set(ids)) == 3
    assert "vision" not in received[0]["params"]["capabilities"]
    assert json.loads(result["content"][0]["text"]) == {"success": True, "result": 42}
    assert other == "ws://127.0.0.1:%d%s?token=%s" % (backend.port, PATH, TOKEN)
    assert TOKEN not in "\n".join(out)


@pytest.mark.anyio
async def test_a_wrong_token_is_refused_and_a_provider_that_comes_again_replaces_itself():
    async with running_backend() as (backend, out):
        with pytest.raises(InvalidStatus) as refused:
            async with provider(backend, calculator, token="wrong"):
                pass
        assert refused.value.response.status_code == 401
        headers = {"Device-Id": "aa:bb:cc:dd:ee:01"}
        async with provider(backend, calculator, headers=headers) as (_, first):
            await backend.wait_ready(WAIT)
            async with provider(backend, calculator, headers=headers):
                await asyncio.wait_for(first.wait_closed(), WAIT)
                device = backend.devices["endpoint:aa:bb:cc:dd:ee:01"]
                result = await backend.call(device, "calculator", {"python_expression": "1+1"})
        transcript = out.text()
    assert first.close_code == 1000 and first.close_reason == "replaced by a new connection"
    assert json.loads(result["content"][0]["text"])["result"] == 2
    assert "endpoint: refused endpoint:agent-" in transcript and ": wrong token" in transcript
    assert "endpoint:aa:bb:cc:dd:ee:01 reconnected: closing its previous connection" in transcript


@pytest.mark.anyio
async def test_garbage_from_a_provider_is_dropped_and_it_stays_listed():
    async with running_backend() as (backend, out):
        async with provider(backend, calculator) as (_, ws):
            device = await backend.wait_ready(WAIT)
            await ws.send(b"\x00binary")
            await ws.send("not json")
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": "unknown_n_1", "result": {}}))
            result = await backend.call(device, "calculator", {"python_expression": "2**5"})
            transcript = out.text()
    assert json.loads(result["content"][0]["text"])["result"] == 32
    assert "dropped a binary frame" in transcript and "dropped a frame that is not JSON" in transcript
    assert "dropped a response to unknown id 'unknown_n_1'" in transcript
