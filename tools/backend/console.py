"""The backend's console: devices, tools [--all] [DEVICE], call DEVICE TOOL [JSON-ARGS],
say DEVICE TEXT, activate CODE."""

import asyncio
import json
import sys
import threading

from ..hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation

HELP = """commands:
  devices                         connected devices
  tools [--all] [DEVICE]          their tools (--all: with user-only tools, asked afresh)
  call DEVICE TOOL [JSON-ARGS]    call a tool, e.g. call 1 self.audio_speaker.set_volume {"volume": 30}
  say DEVICE TEXT                 send TEXT as what the assistant says (a status screen shows it)
  activate CODE                   confirm the activation code a device shows (with --activation)
  help, quit
DEVICE is a device id or its number in `devices`."""


class Console:
    def __init__(self, backend, out=print):
        self.backend = backend
        self.out = out

    async def execute(self, line):
        """Run one command line; False when the console should stop."""
        # Split at most three times: a call's JSON arguments stay as typed.
        words = line.split(None, 3)
        if not words:
            return True
        command, args = words[0], words[1:]
        if command in ("quit", "exit"):
            return False
        handler = {"devices": self._devices, "tools": self._tools, "call": self._call,
                   "say": self._say, "activate": self._activate}.get(command)
        if handler is None:
            self.out(HELP)
            return True
        try:
            await handler(args)
        except UsageError as error:
            self.out("error: %s" % error)
        return True

    def _device(self, ref):
        devices = list(self.backend.devices.values())
        if ref in self.backend.devices:
            return self.backend.devices[ref]
        if ref.isdigit() and 1 <= int(ref) <= len(devices):
            return devices[int(ref) - 1]
        raise UsageError("no device %r (see `devices`)" % ref)

    async def _devices(self, args):
        if not self.backend.devices:
            self.out("no devices connected")
        for number, device in enumerate(self.backend.devices.values(), 1):
            info = device.server_info or {}
            self.out("%d. %s  session %s  %s %s  %d tools%s" % (
                number, device.id, device.session_id, info.get("name", "?"), info.get("version", ""),
                len(device.tools), _how(device)))

    async def _tools(self, args):
        words = " ".join(args).split()
        with_user = "--all" in words
        refs = [w for w in words if w != "--all"]
        devices = [self._device(r) for r in refs] or list(self.backend.devices.values())
        for device in devices:
            try:
                tools = await device.list_tools(with_user) if with_user else device.tools
            except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as error:
                self.out("%s: listing failed: %s" % (device.id, error or "timed out"))
                continue
            self.out("%s: %d tools" % (device.id, len(tools)))
            for tool in tools:
                self.out("  %s - %s" % (tool.get("name"), (tool.get("description") or "").split("\n")[0]))

    async def _call(self, args):
        if len(args) < 2:
            raise UsageError("usage: call DEVICE TOOL [JSON-ARGS]")
        device = self._device(args[0])
        try:
            arguments = json.loads(args[2]) if len(args) > 2 else {}
        except ValueError as error:
            raise UsageError("arguments are not JSON: %s" % error) from None
        if not isinstance(arguments, dict):
            raise UsageError("arguments must be a JSON object")
        await self.backend.call(device, args[1], arguments)


    async def _say(self, args):
        if len(args) < 2:
            raise UsageError("usage: say DEVICE TEXT")
        device = self._device(args[0])
        if not device.speaks:
            raise UsageError("%s serves MCP only: it takes no turn's text" % device.id)
        try:
            await device.send_turn([" ".join(args[1:])])
        except DeviceGone:
            raise UsageError("%s is gone" % device.id) from None

    async def _activate(self, args):
        if len(args) != 1:
            raise UsageError("usage: activate CODE")
        if self.backend.activation is None:
            raise UsageError("activation is off (start the backend with --activation)")
        device_id = self.backend.activate(args[0])
        if device_id is None:
            raise UsageError("no device waits for code %r" % args[0])
        self.out("%s: activation confirmed; it completes when the device asks again" % device_id)


def _how(device):
    """How a device came, where it is not the plain xiaozhi WebSocket."""
    transport = getattr(device, "transport", None)
    return {"mqtt": "  (mqtt)", "mcp_endpoint": "  (MCP endpoint)"}.get(transport, "")


class UsageError(Exception):
    pass


async def stdin_lines():
    """Lines typed on stdin. A daemon thread reads them, so a blocked read never holds
    up shutdown."""
    loop = asyncio.get_running_loop()
    lines = asyncio.Queue()

    def read():
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read, daemon=True).start()
    while (line := await lines.get()) is not None:
        yield line
