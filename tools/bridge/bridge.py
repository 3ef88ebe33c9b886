"""A connected umcp device as a standard MCP server (the SDK's low-level Server).

The device connects to our xiaozhi endpoint like it would to a backend; MCP clients talk
to us over stdio or streamable HTTP. tools/list and tools/call go to the device with our
own request ids (so clients' ids never collide with each other or with the device's
fixed ones); results and errors come back exactly as the device produced them. Device
notifications (tools/list_changed, logging, progress) are passed on to the clients. The
device's user-only tools are listed only with `user_tools` (--user-tools).
"""

import asyncio
import itertools

import mcp_types as types
from mcp.server import NotificationOptions, Server
from mcp.shared.exceptions import MCPError

from tools.backend.backend import reachable_host
from tools.hub.httpserver import HttpServer
from tools.hub.vision import VisionService, create_app, vision_url
from tools.hub.xiaozhi import PATH, DeviceError, DeviceGone, ProtocolViolation, XiaozhiServer, background

DEVICE_PROTOCOL_VERSION = "2025-06-18"
VERSION = "0.1.0"


class _Server(Server):
    def create_initialization_options(self, notification_options=None, *args, **kwargs):
        # Device tool lists change (tools/list_changed): say so on every transport.
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)


class Bridge:
    def __init__(self, token=None, host="127.0.0.1", port=0, device_wait=30.0,
                 request_timeout=30.0, vision_model=None, log=None, user_tools=False):
        self.host = host
        self.public_host = reachable_host(host)
        self.port = port
        self.device_wait = device_wait
        self.request_timeout = request_timeout
        self.user_tools = user_tools  # also list the device's user-only tools (withUserTools)
        self.log = log or (lambda text: None)
        self.devices = XiaozhiServer(token, on_device=self._onboard, on_notification=self._on_notification,
                                     on_gone=self._on_gone, log=self.log, request_timeout=request_timeout)
        self.vision = VisionService(vision_model, log=self.log)
        self._vision_http = HttpServer(create_app(self.vision, log=self.log))
        self.vision_port = 0
        self.mcp = _Server("umcp-bridge", version=VERSION, on_list_tools=self._list_tools,
                           on_call_tool=self._call_tool)
        self.mcp.add_notification_handler("notifications/initialized", types.NotificationParams, self._client_ready)
        self._sessions = []  # one ServerSession per initialized client connection
        self._progress = {}  # progress token we gave the device -> the client's session
        self._tokens = itertools.count(1)
        self._ready = asyncio.Condition()
        self._device = None

    async def start(self):
        self.vision_port = await self._vision_http.start(self.host, 0)
        self.port = await self.devices.start(self.host, self.port)
        self.log("bridge: devices connect to ws://%s:%d%s" % (self.public_host, self.port, PATH))

    async def close(self):
        await self.devices.close()
        await self._vision_http.close()

    async def device(self):
        """The device to forward to, waiting a while for one to connect."""
        try:
            async with self._ready:
                await asyncio.wait_for(self._ready.wait_for(lambda: self._device), self.device_wait)
                return self._device
        except asyncio.TimeoutError:
            raise MCPError(types.INTERNAL_ERROR, "no umcp device connected to ws://%s:%d%s within %g s"
                           % (self.public_host, self.port, PATH, self.device_wait)) from None

    async def _onboard(self, device):
        vision = {"url": vision_url(self.public_host, self.vision_port),
                  "token": self.vision.token_for(device.id)}
        try:
            result = await device.initialize(vision, DEVICE_PROTOCOL_VERSION)
        except (DeviceError, DeviceGone, asyncio.TimeoutError) as error:
            self.log("%s: initialize failed: %s" % (device.id, error or "timed out"))
            return
        self.log("%s: ready, %s" % (device.id, result.get("serverInfo")))
        async with self._ready:
            self._device = device
            self._ready.notify_all()
        await self._broadcast(lambda session: session.send_tool_list_changed())

    def _on_gone(self, device):
        if self._device is device:
            # Fall back to another connected device that finished its initialize, if any
            # (one still onboarding takes over from _onboard when it is ready).
            ready = [d for d in self.devices.devices.values() if d.server_info is not None]
            self._device = ready[0] if ready else None
            # Another device (or none) may have other tools: clients should list again.
            background(self._broadcast(lambda session: session.send_tool_list_changed()))

    async def _client_ready(self, ctx, params):
        self._sessions.append(ctx.session)

    async def _list_tools(self, ctx, params):
        device = await self.device()
        # Every tool from the client's cursor on (none: from the start), following the
        # device's pages, so our answer never carries a nextCursor.
        cursor = params.cursor if params is not None else None
        try:
            return {"tools": await device.list_tools(self.user_tools, cursor)}
        except _DEVICE_FAILURES as error:
            raise _as_mcp_error(error) from None

    async def _call_tool(self, ctx, params):
        device = await self.device()
        meta = None
        token = ((ctx.params or {}).get("_meta") or {}).get("progressToken")
        if token is not None:
            token = "bridge-%d" % next(self._tokens)
            self._progress[token] = ctx.session
            meta = {"progressToken": token}
        try:
            return await device.call_tool(params.name, params.arguments, meta)
        except _DEVICE_FAILURES as error:
            raise _as_mcp_error(error) from None
        finally:
            self._progress.pop(token, None)

    def _on_notification(self, device, payload):
        method, params = payload.get("method"), payload.get("params") or {}
        if method == "notifications/progress":
            session = self._progress.get(params.get("progressToken"))
            if session is not None:
                background(session.report_progress(
                    params.get("progress", 0), params.get("total"), params.get("message")))
        elif method == "notifications/tools/list_changed":
            background(self._broadcast(lambda session: session.send_tool_list_changed()))
        elif method == "notifications/message":
            note = types.LoggingMessageNotification(params=types.LoggingMessageNotificationParams(
                level=params.get("level", "info"), data=params.get("data"), logger=params.get("logger")))
            background(self._broadcast(lambda session: session.send_notification(note)))
        else:
            self.log("%s: notification %s not passed on" % (device.id, method))

    async def _broadcast(self, send):
        for session in list(self._sessions):
            try:
                await send(session)
            except Exception as error:  # that client went away: forget it
                self.log("dropping a client session: %r" % error)
                self._sessions.remove(session)


_DEVICE_FAILURES = (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError)


def _as_mcp_error(error):
    """The device's JSON-RPC error as it sent it; our own failures as internal errors."""
    if isinstance(error, DeviceError):
        return MCPError(error.code, error.message, error.data)
    if isinstance(error, asyncio.TimeoutError):
        return MCPError(types.INTERNAL_ERROR, "the device did not answer in time")
    if isinstance(error, DeviceGone):
        return MCPError(types.INTERNAL_ERROR, "the device disconnected before answering")
    return MCPError(types.INTERNAL_ERROR, str(error))
