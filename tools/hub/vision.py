"""The HTTP side of the local backend: the vision endpoint photos are uploaded to, and
firmware images for OTA.

POST /mcp/vision/explain takes what xiaozhi-esp32-server takes (multipart `question`
then `file`, headers `Authorization: Bearer <token>` and `Device-Id`) and answers
{"success": true, "action": "RESPONSE", "response": "..."}. Without a vision model
configured the response describes the image itself: format, byte size, dimensions.
"""

import asyncio
import base64
import json
import os
import secrets
import struct
import urllib.request

from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

VISION_PATH = "/mcp/vision/explain"
MAX_IMAGE = 5 * 1024 * 1024  # the limit the real backend applies
_MAX_FORM = MAX_IMAGE + 64 * 1024  # the image plus the question and multipart framing
_SOF_MARKERS = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_STANDALONE_MARKERS = {0x01, 0xD0, 0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8}


def vision_url(host, port):
    return "http://%s:%d%s" % (host, port, VISION_PATH)


def jpeg_dimensions(data):
    """(width, height) from the first SOF marker of a JPEG, or None."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _STANDALONE_MARKERS:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image / start of scan: no SOF before it
            return None
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in _SOF_MARKERS and i + 9 <= len(data):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None


def describe_image(data, mime_type):
    """What we can tell about an image without a model."""
    if data[:3] == b"\xff\xd8\xff":
        size = jpeg_dimensions(data)
        shape = "%dx%d pixels" % size if size else "dimensions unreadable (no SOF marker)"
        return "a JPEG image of %d bytes, %s" % (len(data), shape)
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return "a PNG image of %d bytes, %dx%d pixels" % (len(data), width, height)
    return "%d bytes of %s that are not a JPEG or PNG image" % (len(data), mime_type or "unknown type")


class OpenAIVision:
    """An OpenAI-compatible chat completions endpoint that accepts image_url content."""

    def __init__(self, base_url, model, api_key=None, timeout=60):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout

    @staticmethod
    def add_arguments(parser):
        """The command-line flags from_args() reads (backend and bridge share them)."""
        parser.add_argument("--vision-base-url", help="OpenAI-compatible API base (or UMCP_VISION_BASE_URL)")
        parser.add_argument("--vision-model", help="vision model name (or UMCP_VISION_MODEL)")
        parser.add_argument("--vision-key", help="API key (or UMCP_VISION_API_KEY)")

    @classmethod
    def from_args(cls, args):
        """Flags win over UMCP_VISION_BASE_URL / UMCP_VISION_MODEL / UMCP_VISION_API_KEY;
        None when no model is configured."""
        base_url = args.vision_base_url or os.environ.get("UMCP_VISION_BASE_URL")
        model = args.vision_model or os.environ.get("UMCP_VISION_MODEL")
        if not (base_url and model):
            return None
        return cls(base_url, model, args.vision_key or os.environ.get("UMCP_VISION_API_KEY"))

    async def explain(self, question, data, mime_type):
        return await asyncio.to_thread(self._explain, question, data, mime_type)

    def _explain(self, question, data, mime_type):
        image_url = "data:%s;base64,%s" % (mime_type, base64.b64encode(data).decode("ascii"))
        body = {"model": self.model, "messages": [{"role": "user", "content": [
            {"type": "text", "text": question},
            {"type": "image_url", "image_url": {"url": image_url}},
        ]}]}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        request = urllib.request.Request(self.base_url + "/chat/completions", json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            answer = json.load(response)
        return answer["choices"][0]["message"]["content"]


class VisionService:
    """Per-device tokens and the answer to an uploaded photo."""

    def __init__(self, model=None, log=print):
        self.model = model
        self.log = log
        self._device_by_token = {}
        self._token_by_device = {}

    def token_for(self, device_id):
        token = self._token_by_device.get(device_id)
        if token is None:
            token = secrets.token_urlsafe(16)
            self._token_by_device[device_id] = token
            self._device_by_token[token] = device_id
        return token

    def authorized(self, authorization, device_id):
        """`Authorization: Bearer <token>` names a token we gave to `device_id`."""
        scheme, _, token = (authorization or "").partition(" ")
        # A token we never gave maps to None: it must not match a missing Device-Id.
        return scheme == "Bearer" and device_id is not None and self._device_by_token.get(token) == device_id

    async def explain(self, question, data, mime_type):
        facts = describe_image(data, mime_type)
        if self.model is None:
            return "I received %s. Question: %s" % (facts, question)
        return await self.model.explain(question, data, mime_type)


def _failure(status, message):
    return JSONResponse({"success": False, "message": message}, status_code=status)


def create_app(vision, ota_dir=None, log=print, routes=()):
    """The Starlette app: the vision endpoint, GET /ota/<file> when ota_dir is set, and
    `routes` (the backend's web console)."""

    async def explain(request):
        device_id = request.headers.get("Device-Id")
        if not vision.authorized(request.headers.get("Authorization"), device_id):
            log("vision: refused an upload from %s: bad token or Device-Id" % (device_id or "an unnamed device"))
            return _failure(401, "invalid token for this Device-Id")
        # Refused before reading: the form parser would store the whole upload first.
        if int(request.headers.get("Content-Length") or 0) > _MAX_FORM:
            return _failure(413, "image larger than %d bytes" % MAX_IMAGE)
        form = await request.form(max_files=1, max_fields=4)
        upload = form.get("file")
        question = form.get("question")
        if upload is None or isinstance(upload, str) or not question:
            return _failure(400, "expected multipart fields 'question' and 'file'")
        data = await upload.read(MAX_IMAGE + 1)
        if len(data) > MAX_IMAGE:
            return _failure(413, "image larger than %d bytes" % MAX_IMAGE)
        log("vision: %s uploaded %s, question %r" % (device_id, describe_image(data, upload.content_type), question))
        try:
            answer = await vision.explain(question, data, upload.content_type)
        except Exception as error:  # a model outage is the caller's answer, not our crash
            return _failure(502, "vision model failed: %s" % error)
        return JSONResponse({"success": True, "action": "RESPONSE", "response": answer})

    async def firmware(request):
        name = request.path_params["name"]
        path = os.path.join(ota_dir, name)
        if os.sep in name or name.startswith(".") or not os.path.isfile(path):
            return _failure(404, "no firmware image %r" % name)
        size = os.path.getsize(path)
        return StreamingResponse(_stream_file(path, size, log), media_type="application/octet-stream",
                                 headers={"Content-Length": str(size)})

    ota = [Route("/ota/{name}", firmware, methods=["GET"])] if ota_dir else []
    return Starlette(routes=[Route(VISION_PATH, explain, methods=["POST"])] + ota + list(routes))


async def _stream_file(path, size, log, chunk=4096):
    """Yield the file in 4 KB blocks (the device's flash block), logging every 10 %."""
    sent, next_report = 0, 10
    name = os.path.basename(path)
    with open(path, "rb") as source:
        while True:
            block = source.read(chunk)
            if not block:
                break
            yield block
            sent += len(block)
            while size and sent * 100 >= next_report * size and next_report <= 100:
                log("ota: %s %d%% (%d/%d bytes)" % (name, next_report, sent, size))
                next_report += 10
