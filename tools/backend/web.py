"""The backend's web console: a page (static files in tools/backend/static/, no build step)
and the JSON + server-sent-events API it uses (/api/devices, /api/devices/<id>/tools,
/call, /refresh, /api/photos/<n>, /api/events), served by the backend's HTTP server beside
the vision and OTA endpoints. docs/backend.md, "How the web console is built", lists the
API and what each answer holds.

Safe by default: with `remote=False` (the default) it answers only connections from this
machine, and only under a loopback Host name (a page elsewhere that resolves its own name
to 127.0.0.1 gets nothing). With `remote=True` every API request needs
`Authorization: Bearer <token>`. Either way an API request from another site (its Origin
or Sec-Fetch-Site) is refused, and a POST must be JSON (tools/backend/guard.py). Devices'
text reaches the page only as JSON data; the page puts it in as text, never as HTML.
"""

import asyncio
import base64
import collections
import itertools
import json
import os
import secrets
import time

from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .guard import SECURITY_HEADERS, refusal, refused
from .records import Photo, Record
from ..hub.xiaozhi import DeviceError, DeviceGone, ProtocolViolation, background

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml"}
IMAGE_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
MAX_PHOTOS = 12
KEEPALIVE_S = 15.0
STATUS_TOOL = "self.get_device_status"
INFO_TOOL = "self.get_system_info"
class WebConsole:
    """The console's state (devices, photos, event subscribers) and its routes.

    remote: False answers this machine only; True answers any machine that presents
    `token` (None: one is made up), and the printed URL names the backend's public_host.
    """

    def __init__(self, backend, remote=False, token=None):
        self.backend = backend
        self.remote = remote
        self.token = (token or secrets.token_urlsafe(16)) if remote else None
        self.records = {}  # device id -> Record, in order of first connection
        self.photos = collections.deque(maxlen=MAX_PHOTOS)
        self._photo_numbers = itertools.count(1)
        self._subscribers = set()
        self._progress_seen = {}  # progressToken -> loop time of its last notification
        self._closed = False
        backend.listeners.append(self._on_event)

    @property
    def url(self):
        if not self.remote:
            return "http://127.0.0.1:%d/" % self.backend.http_port
        return "http://%s:%d/#token=%s" % (self.backend.public_host, self.backend.http_port, self.token)

    def close(self):
        self._closed = True
        for queue in list(self._subscribers):
            queue.put_nowait(None)

    # ---- what the backend tells us ------------------------------------------------

    def _record(self, device):
        record = self.records.get(device.id)
        if record is None:
            record = self.records[device.id] = Record(device.id)
        return record

    def _on_event(self, event, device, data):
        record = self._record(device)
        if event == "connected":
            record.device, record.online, record.ready, record.error = device, True, False, None
            record.connected_at, record.disconnected_at = time.time(), None
        elif event == "ready":
            record.ready = True
            background(self._probe(record, device))
        elif event == "failed":
            record.error = "onboarding failed: %s" % data
        elif event == "gone":
            if record.device is not device:
                return  # an older connection of a device that reconnected
            record.online = record.ready = False
            record.disconnected_at = time.time()
        elif event == "tools":
            self._publish({"type": "tools", "device": device.id})
        elif event == "notification":
            params = data.get("params") if isinstance(data.get("params"), dict) else {}
            if data.get("method") == "notifications/progress" and "progressToken" in params:
                token = params["progressToken"]
                if isinstance(token, str) and token in self._progress_seen:
                    self._progress_seen[token] = asyncio.get_running_loop().time()
            self._publish({"type": "notification", "device": device.id, "payload": data})
            return
        elif event == "photo":
            self._add_photo(device.id, data["data"], data["mime"], "vision upload", data["question"])
            return
        self._publish({"type": "device", "device": record.json()})

    async def _probe(self, record, device):
        """Read the device's status and system info for its card (user-only tools may be
        called by the owner, listed or not)."""
        for name in (INFO_TOOL, STATUS_TOOL):
            value = await self._read_json_tool(device, name)
            if value is not None:
                if name == INFO_TOOL:
                    record.info, record.info_time = value, time.time()
                else:
                    record.status = value
        if record.device is device:
            self._publish({"type": "device", "device": record.json()})

    async def _read_json_tool(self, device, name):
        try:
            result = await device.call_tool(name, {}, timeout=self.backend.request_timeout)
            if result.get("isError"):
                return None
            value = json.loads(result["content"][0]["text"])
            return value if isinstance(value, dict) else None
        except (DeviceError, DeviceGone, asyncio.TimeoutError, KeyError, IndexError, TypeError, ValueError):
            return None

    def _add_photo(self, device_id, data, mime, source, question=None):
        if mime not in IMAGE_TYPES:
            return
        photo = Photo(next(self._photo_numbers), device_id, data, mime, source, question)
        self.photos.append(photo)
        self._publish({"type": "photo", "photo": photo.json()})

    def _publish(self, event):
        for queue in list(self._subscribers):
            queue.put_nowait(event)

    # ---- the HTTP side ----------------------------------------------------------------

    def routes(self):
        return [
            Route("/", self._page, methods=["GET"]),
            Route("/static/{name}", self._static, methods=["GET"]),
            Route("/api/devices", self._api(self._devices), methods=["GET"]),
            Route("/api/devices/{id:path}/tools", self._api(self._tools), methods=["GET"]),
            Route("/api/devices/{id:path}/call", self._api(self._call), methods=["POST"]),
            Route("/api/devices/{id:path}/refresh", self._api(self._refresh), methods=["POST"]),
            Route("/api/photos/{number:int}", self._api(self._photo), methods=["GET"]),
            Route("/api/events", self._api(self._events), methods=["GET"]),
        ]

    def _refusal(self, request, api):
        """A response refusing the request, or None to serve it (tools/backend/guard.py)."""
        return refusal(request, api, self.remote, self.token, self.backend.http_port)

    def _api(self, handler):
        async def endpoint(request):
            refusing = self._refusal(request, api=True)
            if refusing is not None:
                return refusing
            response = await handler(request)
            response.headers.update(SECURITY_HEADERS)
            return response
        return endpoint

    async def _page(self, request):
        refusing = self._refusal(request, api=False)
        if refusing is not None:
            return refusing
        return FileResponse(os.path.join(STATIC_DIR, "index.html"), headers=SECURITY_HEADERS,
                            media_type=STATIC_TYPES[".html"])

    async def _static(self, request):
        refusing = self._refusal(request, api=False)
        if refusing is not None:
            return refusing
        name = request.path_params["name"]
        kind = STATIC_TYPES.get(os.path.splitext(name)[1])
        path = os.path.join(STATIC_DIR, name)
        if kind is None or "/" in name or name.startswith(".") or not os.path.isfile(path):
            return refused(404, "no such file")
        return FileResponse(path, media_type=kind, headers=SECURITY_HEADERS)

    def _device(self, request):
        device = self.backend.devices.get(request.path_params["id"])
        if device is None:
            raise _NoDevice(request.path_params["id"])
        return device

    async def _devices(self, request):
        return JSONResponse({"devices": [record.json() for record in self.records.values()],
                             "photos": [photo.json() for photo in self.photos]})

    async def _tools(self, request):
        try:
            device = self._device(request)
        except _NoDevice as missing:
            return missing.response()
        if request.query_params.get("user") not in ("1", "true"):
            return JSONResponse({"tools": device.tools})
        try:
            every = await device.list_tools(with_user_tools=True)
        except (DeviceError, DeviceGone, ProtocolViolation, asyncio.TimeoutError) as error:
            return refused(502, "listing failed: %s" % (error or "timed out"))
        listed = {tool.get("name") for tool in device.tools}
        for tool in every:
            if isinstance(tool, dict) and tool.get("name") not in listed:
                tool["userOnly"] = True
        return JSONResponse({"tools": every})

    async def _call(self, request):
        try:
            device = self._device(request)
        except _NoDevice as missing:
            return missing.response()
        try:
            body = await request.json()
        except ValueError:
            return refused(400, "the body is not JSON")
        name = body.get("name") if isinstance(body, dict) else None
        arguments = body.get("arguments", {}) if isinstance(body, dict) else None
        progress = body.get("progressToken") if isinstance(body, dict) else None
        if not isinstance(name, str) or not isinstance(arguments, dict):
            return refused(400, "expected {\"name\": string, \"arguments\": object}")
        if progress is not None and not isinstance(progress, str):
            return refused(400, "progressToken must be a string")
        started = time.perf_counter()
        try:
            result = await self._invoke(device, name, arguments, progress)
        except DeviceError as error:
            return JSONResponse({"error": {"code": error.code, "message": error.message, "data": error.data}})
        except asyncio.TimeoutError:
            return refused(504, "no answer from %s within %s s" % (device.id, self.backend.request_timeout))
        except DeviceGone:
            return refused(409, "%s disconnected before answering" % device.id)
        elapsed_ms = (time.perf_counter() - started) * 1000
        for block in result.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "image":
                try:
                    data = base64.b64decode(block.get("data") or "", validate=True)
                except ValueError:
                    continue
                self._add_photo(device.id, data, block.get("mimeType"), "result of %s" % name)
        if not result.get("isError") and not _read_only(device, name):
            background(self._reread_status(device))
        return JSONResponse({"result": result, "ms": round(elapsed_ms, 2)})

    async def _invoke(self, device, name, arguments, progress):
        """backend.invoke; a call with a progressToken may take as long as it keeps
        reporting progress (a firmware upgrade), each silence bounded by request_timeout."""
        if progress is None:
            return await self.backend.invoke(device, name, arguments)
        loop = asyncio.get_running_loop()
        self._progress_seen[progress] = loop.time()
        call = asyncio.ensure_future(self.backend.invoke(device, name, arguments, timeout=24 * 3600,
                                                          meta={"progressToken": progress}))
        try:
            while True:
                quiet = loop.time() - self._progress_seen[progress]
                done, _ = await asyncio.wait({call}, timeout=max(self.backend.request_timeout - quiet, 0.01))
                if done:
                    return call.result()
                if loop.time() - self._progress_seen[progress] >= self.backend.request_timeout:
                    call.cancel()  # the device is told (notifications/cancelled)
                    self.backend.out("%s: <- no answer or progress within %s s" % (
                        device.id, self.backend.request_timeout))
                    raise asyncio.TimeoutError()
        finally:
            self._progress_seen.pop(progress, None)
            if not call.done():
                call.cancel()

    async def _reread_status(self, device):
        record = self.records.get(device.id)
        if record is None or STATUS_TOOL not in {tool.get("name") for tool in device.tools}:
            return
        status = await self._read_json_tool(device, STATUS_TOOL)
        if status is not None and record.device is device:
            record.status = status
            self._publish({"type": "device", "device": record.json()})

    async def _refresh(self, request):
        try:
            device = self._device(request)
        except _NoDevice as missing:
            return missing.response()
        record = self._record(device)
        await self._probe(record, device)
        return JSONResponse({"device": record.json()})

    async def _photo(self, request):
        number = request.path_params["number"]
        for photo in self.photos:
            if photo.number == number:
                return Response(photo.data, media_type=photo.mime)
        return refused(404, "no photo %d (the last %d are kept)" % (number, MAX_PHOTOS))

    async def _events(self, request):
        queue = asyncio.Queue()
        if self._closed:
            return refused(503, "the backend is stopping")
        self._subscribers.add(queue)

        async def stream():
            try:
                yield ": umcp web console\n\n"
                while True:
                    try:
                        event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                    except asyncio.TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if event is None:
                        return
                    yield "data: %s\n\n" % json.dumps(event, separators=(",", ":"))
            finally:
                self._subscribers.discard(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"X-Accel-Buffering": "no"})


def _read_only(device, name):
    for tool in device.tools:
        if tool.get("name") == name:
            return bool((tool.get("annotations") or {}).get("readOnlyHint"))
    return False


class _NoDevice(Exception):
    def response(self):
        return refused(404, "no device %r online" % self.args[0])
