"""make bench's fuzz in the measuring form: the staged firmware booted in the unix port with
a given heap (a tools.sim.board.SimBoard) against a bare xiaozhi server on loopback, which
answers the hello, initializes the session and hands the connection to
tools/sim/hostile.py's driver: `count` hostile messages within the limit the device
announced. Then, with `invalid`, each of INVALID_UTF8 as a text frame on a connection of
its own: RFC 6455 8.1 closes each with 1007, and the device connects again. Reports what
the driver saw and how each connection ended.
"""

import asyncio
import json
import os
import shutil
import tempfile

from websockets.asyncio.server import serve

from . import heap
from ..sim.board import SimBoard, config_for
from ..sim.fullsession import BOARD, LINK_CONFIG
from ..sim.hostile import drive

SEED = 20261124
WAIT_S = 20.0  # for the device to connect (a boot) or to answer initialize
TOO_BIG = 1009  # RFC 6455's close for a message over the limit: not a drop the device chose
NOT_UTF8 = 1007  # RFC 6455's close for a text frame that is not UTF-8
# Text frames that are not UTF-8 (RFC 3629), inside what looks like a message.
INVALID_UTF8 = [b'{"type":"mcp","payload":"%s"}' % wrong for wrong in (
    b"\xff", b"\x80", b"\xc3\x28", b"\xc0\xaf", b"\xe0\x80\xaf",  # stray, bad continuation, overlong
    b"\xed\xa0\x80", b"\xed\xbf\xbf",  # UTF-16 surrogates encoded
    b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80")] + [b'{"type":"mcp","payload":"\xe4\xb8']  # past U+10FFFF; cut short


class BareServer:
    """A xiaozhi server that only says hello: each device connection, once its hello is
    answered with a fresh session id, is queued as (connection, session id); the close
    code of every finished connection is kept (None: it ended without one)."""

    def __init__(self):
        self.connections = asyncio.Queue()
        self.close_codes = []
        self.port = 0
        self._server = None

    async def start(self):
        self._server = await serve(self._handle, "127.0.0.1", 0, max_size=2 ** 22, ping_interval=None)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _handle(self, ws):
        try:
            await asyncio.wait_for(ws.recv(), WAIT_S)  # the device's hello
            session_id = "fuzz-%d" % (len(self.close_codes) + self.connections.qsize() + 1)
            await ws.send(json.dumps({"type": "hello", "transport": "websocket", "session_id": session_id,
                                      "audio_params": {"format": "opus", "sample_rate": 16000,
                                                       "channels": 1, "frame_duration": 60}}))
            await self.connections.put((ws, session_id))
        finally:
            await ws.wait_closed()
            close = ws.protocol.close_rcvd
            self.close_codes.append(close.code if close else None)

    async def next(self):
        """(connection, session id, announced message limit) of the next device, initialized."""
        ws, session_id = await asyncio.wait_for(self.connections.get(), WAIT_S)
        await ws.send(json.dumps({"session_id": session_id, "type": "mcp", "payload": {
            "jsonrpc": "2.0", "id": "fuzz-init", "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                       "clientInfo": {"name": "umcp-bench-fuzz", "version": "1"}}}}))
        while True:
            payload = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S)).get("payload") or {}
            if payload.get("id") == "fuzz-init":
                break
        await ws.send(json.dumps({"session_id": session_id, "type": "mcp",
                                  "payload": {"jsonrpc": "2.0", "method": "notifications/initialized"}}))
        limit = (((payload.get("result") or {}).get("capabilities") or {}).get("experimental") or {})
        return ws, session_id, (limit.get("messageLimit") or {}).get("maxBytes")

    async def stop(self):
        self._server.close()
        await self._server.wait_closed()


async def fuzz_firmware(micropython, stage, heapsize, count, seed=SEED, invalid=False):
    """Boot `stage` (a heap.Stage) with `heapsize` bytes and send it `count` hostile messages
    (then, with `invalid`, INVALID_UTF8's frames). Returns {"heapsize", "limit", "report":
    hostile.Report, "drops": connections of the hostile messages that ended other than
    with RFC 6455's 1009, "invalid": [the close code of each invalid frame's connection,
    None where none came]}."""
    server = await BareServer().start()
    config = dict(config_for(BOARD, "ws://127.0.0.1:%d/xiaozhi/v1/" % server.port, "fuzz",
                             wifi={"ssid": "", "password": ""}), **LINK_CONFIG)
    board = SimBoard(config, stage.runtime, micropython, heapsize, stage=stage.folder, entry=stage.entry)
    try:
        with open(os.path.join(board.root, "device.log"), "w+", errors="replace") as device_log:
            board.log = device_log
            board.start()
            ws, session_id, limit = await server.next()

            latest = [ws]

            async def reconnect():
                latest[0], session_id, _ = await server.next()
                return latest[0], session_id

            report = await drive(ws, session_id, count, seed, limit=limit, reconnect=reconnect)
            await asyncio.sleep(0.2)  # a connection that just ended has its close code kept
            ended = list(server.close_codes)  # during the run, not as the bench stops the board
            codes = await _send_invalid(server, latest[0]) if invalid else []
    finally:
        board.close()
        await server.stop()
    return {"heapsize": heapsize, "limit": limit, "report": report,
            "drops": len([code for code in ended if code != TOO_BIG]), "closes": ended, "invalid": codes}


async def _send_invalid(server, ws):
    """Each of INVALID_UTF8 as a text frame, the first on `ws` and each next one on the
    device's next connection; the close code the device gave each (None: none)."""
    codes = []
    for frame in INVALID_UTF8:
        if ws is None:
            ws, _, _ = await server.next()
        await ws.send(frame, text=True)  # the bytes as they are, in a text frame
        try:
            await asyncio.wait_for(ws.wait_closed(), WAIT_S)
        except asyncio.TimeoutError:
            pass
        close = ws.protocol.close_rcvd
        codes.append(close.code if close else None)
        ws = None
    return codes


def measure_fuzz(micropython, heapsize, count, form="mpy_board", invalid=False):
    """fuzz_firmware in `form`: "mpy_board" (the measuring form: the .mpy files beside the
    simulated hardware frozen in `micropython`) or "mpy" (beside it as .mpy files)."""
    stage = heap.stage_form(form, tempfile.mkdtemp(prefix="umcp-bench-stage-"))
    try:
        return asyncio.run(fuzz_firmware(micropython, stage, heapsize, count, invalid=invalid))
    finally:
        shutil.rmtree(stage.folder, ignore_errors=True)


def figures(result):
    """What the bench keeps of a fuzz_firmware result (plain values)."""
    report = result["report"]
    return {"heapsize": result["heapsize"], "limit": result["limit"], "sent": report.sent,
            "requests": report.requests, "answered": report.answered,
            "unanswered": report.unanswered_count, "out_of_memory": report.out_of_memory,
            "null_errors": report.null_errors, "expected_null": report.expected_null,
            "drops": result["drops"], "bad": len(report.bad), "problems": report.problems,
            "invalid": result["invalid"]}
