"""A small scripted umcp-like device speaking the xiaozhi WebSocket protocol, with MCP
resources and templates of its own (resources/list paginated,
resources/read, resources/templates/list, resources/subscribe/unsubscribe,
notifications/resources/updated). It runs on a thread with its own event loop and
reconnects when its link drops, like the firmware does.

Tools: self.audio_speaker.set_volume (updates device://status and sends
notifications/resources/updated to subscribers), self.chatty (logs info and warning
during the call, honouring logging/setLevel), self.slow (answers after 30 s unless
cancelled), self.hang_up (drops the link without answering), self.steps (progress 1/2,
2/2 when the call carries a progressToken), self.camera.take_photo (uploads JPEG to the
vision URL that initialize gave, answers the endpoint's body).
"""

import asyncio
import json
import threading

from websockets.asyncio.client import connect

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
RESOURCES = [
    {"uri": "device://status", "name": "status", "mimeType": "application/json"},
    {"uri": "device://system", "name": "system", "mimeType": "application/json"},
    {"uri": "device://log", "name": "log", "mimeType": "text/plain"},
]
TEMPLATES = [{"uriTemplate": "device://log/{line}", "name": "log line", "mimeType": "text/plain"}]
TOOLS = [
    {"name": "self.audio_speaker.set_volume", "description": "Set the volume",
     "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0,
                                                                  "maximum": 100}},
                     "required": ["volume"]}},
    {"name": "self.chatty", "description": "Logs while it runs", "inputSchema": {"type": "object"}},
    {"name": "self.slow", "description": "Answers after 30 s", "inputSchema": {"type": "object"}},
    {"name": "self.hang_up", "description": "Drops the link", "inputSchema": {"type": "object"}},
    {"name": "self.steps", "description": "Reports progress 1/2, 2/2", "inputSchema": {"type": "object"}},
    {"name": "self.camera.take_photo", "description": "Uploads JPEG to the vision URL",
     "inputSchema": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}},
]
# The smallest JPEG-shaped bytes: SOI, a comment, EOI (the bridge does not decode it).
JPEG = b"\xff\xd8\xff\xfe\x00\x06fake\xff\xd9"


def upload(url, token, device_id, question, jpeg):
    """POST the photo as the firmware does (multipart question + file); the body's text."""
    import urllib.request

    boundary = "fakeboundary"
    body = ("--%s\r\nContent-Disposition: form-data; name=\"question\"\r\n\r\n%s\r\n"
            "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.jpg\"\r\n"
            "Content-Type: image/jpeg\r\n\r\n" % (boundary, question, boundary)).encode() + jpeg + \
        ("\r\n--%s--\r\n" % boundary).encode()
    request = urllib.request.Request(url, body, {
        "Content-Type": "multipart/form-data; boundary=" + boundary,
        "Authorization": "Bearer " + token, "Device-Id": device_id})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


class FakeDevice:
    def __init__(self, url, token, device_id="fa:ce:00:00:00:03"):
        self.url = url
        self.token = token
        self.device_id = device_id
        self.volume = 50
        self.level = "debug"
        self.subscribed = set()
        self.received = []  # every MCP payload from the bridge
        self.connections = 0
        self.vision = None  # {"url", "token"} from initialize
        self._loop = None
        self._thread = None
        self._stop = None

    # --- the thread
    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self):
        asyncio.run(self._main())

    async def _main(self):
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        while not self._stop.is_set():
            task = asyncio.create_task(self._session())
            stop = asyncio.create_task(self._stop.wait())
            await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                task.cancel()
            stop.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
            if not self._stop.is_set():
                await asyncio.sleep(0.2)

    def methods(self, name):
        return [p for p in list(self.received) if p.get("method") == name]

    # --- one session
    async def _session(self):
        headers = {"Authorization": "Bearer " + self.token, "Device-Id": self.device_id}
        async with connect(self.url, additional_headers=headers) as ws:
            await ws.send(json.dumps({"type": "hello", "version": 1, "features": {"mcp": True}}))
            session = json.loads(await ws.recv())["session_id"]
            self.connections += 1
            self.subscribed = set()  # a new connection starts afresh, like the firmware
            self.level = "debug"
            calls = {}

            async def send(payload):
                await ws.send(json.dumps({"session_id": session, "type": "mcp", "payload": payload}))

            async def log(level, data):
                if LEVELS.index(level) >= LEVELS.index(self.level):
                    await send({"jsonrpc": "2.0", "method": "notifications/message",
                                "params": {"level": level, "logger": "fake", "data": data}})

            async def call(request_id, name, args, meta):
                if name == "self.audio_speaker.set_volume":
                    volume = args.get("volume")
                    if not isinstance(volume, int) or not 0 <= volume <= 100:
                        await send({"jsonrpc": "2.0", "id": request_id, "error": {
                            "code": -32602, "message": "volume: %r is not within 0..100" % (volume,)}})
                        return
                    self.volume = volume
                    await send({"jsonrpc": "2.0", "id": request_id,
                                "result": {"content": [{"type": "text", "text": "true"}]}})
                    if "device://status" in self.subscribed:
                        await send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                    "params": {"uri": "device://status"}})
                    return
                if name == "self.chatty":
                    await log("info", "chatty: info")
                    await log("warning", "chatty: warning")
                    await asyncio.sleep(0.05)
                    text = "said something"
                elif name == "self.steps":
                    token = (meta or {}).get("progressToken")
                    for step in (1, 2):
                        if token is not None:
                            await send({"jsonrpc": "2.0", "method": "notifications/progress",
                                        "params": {"progressToken": token, "progress": step, "total": 2}})
                    text = "stepped"
                elif name == "self.camera.take_photo":
                    text = await asyncio.to_thread(upload, self.vision["url"], self.vision["token"],
                                                   self.device_id, args.get("question", ""), JPEG)
                elif name == "self.slow":
                    await asyncio.sleep(30)
                    text = "slept"
                else:
                    await send({"jsonrpc": "2.0", "id": request_id, "error": {
                        "code": -32602, "message": "unknown tool %s" % name}})
                    return
                await send({"jsonrpc": "2.0", "id": request_id,
                            "result": {"content": [{"type": "text", "text": text}]}})

            def result(request_id, value):
                return send({"jsonrpc": "2.0", "id": request_id, "result": value})

            async for text in ws:
                payload = json.loads(text)["payload"]
                self.received.append(payload)
                method, params, rid = payload.get("method"), payload.get("params") or {}, payload.get("id")
                if method == "initialize":
                    self.vision = (params.get("capabilities") or {}).get("vision")
                    await result(rid, {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                                       "capabilities": {"tools": {"listChanged": True}, "logging": {},
                                                        "resources": {"subscribe": True, "listChanged": True}},
                                       "serverInfo": {"name": "fake-umcp", "version": "1"}})
                elif method == "tools/list":
                    await result(rid, {"tools": TOOLS})
                elif method == "resources/list":
                    # two per page: the bridge must follow the cursor
                    start = int(params.get("cursor") or 0)
                    page = {"resources": RESOURCES[start:start + 2]}
                    if start + 2 < len(RESOURCES):
                        page["nextCursor"] = str(start + 2)
                    await result(rid, page)
                elif method == "resources/templates/list":
                    await result(rid, {"resourceTemplates": TEMPLATES})
                elif method == "resources/read":
                    uri = params.get("uri")
                    if uri == "device://status":
                        await result(rid, {"contents": [{"uri": uri, "mimeType": "application/json",
                                                         "text": json.dumps({"volume": self.volume})}]})
                    elif uri in ("device://system", "device://log") or (uri or "").startswith("device://log/"):
                        await result(rid, {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "ok"}]})
                    else:
                        await send({"jsonrpc": "2.0", "id": rid, "error": {
                            "code": -32002, "message": "Resource not found", "data": {"uri": uri}}})
                elif method == "resources/subscribe":
                    self.subscribed.add(params.get("uri"))
                    await result(rid, {})
                elif method == "resources/unsubscribe":
                    self.subscribed.discard(params.get("uri"))
                    await result(rid, {})
                elif method == "logging/setLevel":
                    self.level = params.get("level")
                    await result(rid, {})
                elif method == "tools/call":
                    if params.get("name") == "self.hang_up":
                        await ws.close()
                        return
                    calls[rid] = asyncio.create_task(call(rid, params.get("name"), params.get("arguments") or {},
                                                          params.get("_meta")))
                elif method == "notifications/cancelled":
                    task = calls.pop(params.get("requestId"), None)
                    if task is not None:
                        task.cancel()
                elif rid is not None:
                    await send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": method}})
