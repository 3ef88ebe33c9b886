"""The camera's tools and the vision service client, on a board with a camera: loaded for
each call (umcp.compat.OnDemand: the vision URL in initialize, a photo, the photo itself)
and forgotten after. Photos are rare, and on a board without PSRAM this code and the HTTP
client's are heap the session needs. What lasts between calls is on the board's
CommonTools (`tools`): `vision` (the URL and token the backend sent, or None),
`vision_refused` (why its URL was refused, if it was), `photo` (the last photo) and `ca`
(what an https vision URL must chain to)."""

import gc

from umcp.compat import call_then_forget, const, forget_modules, get_logger
from umcp.result import ImageContent
from unet import bearer

_TIMEOUT_S = const(30)
# A photo is kept after it is taken only while this much heap stays free besides it
# (where the heap can be asked: MicroPython).
PHOTO_HEAP_RESERVE = const(48 * 1024)
_PHOTO_URI = "device://photo/last"  # umcpfw.resources

_log = get_logger("vision")


def configure(tools, url, token):
    """server.on_vision's callback: the backend told us where to send photos. A URL that
    is not a usable http(s) URL (or carries spaces or control characters, which would
    add header lines to the upload) is refused and logged; explain() then says why."""
    try:
        if call_then_forget("unet.url", "parse_url", url)[0] not in ("http", "https"):
            raise ValueError("not an HTTP URL: %r" % (url,))
    except ValueError as e:
        _log.error("refused the server's vision URL: %s", e)
        tools.vision = None
        tools.vision_refused = str(e)
        return
    tools.vision = (url, token)
    tools.vision_refused = None


async def take_photo(tools, args):
    """self.camera.take_photo: the photo and the question to the vision service."""
    jpeg = capture(tools)  # raises OSError when the capture fails
    return await explain(tools, args["question"], jpeg)


def get_photo(tools, args):
    """self.camera.get_photo: the JPEG itself, as an MCP image."""
    return ImageContent(capture(tools), "image/jpeg")


def capture(tools):
    jpeg = tools.board.camera.capture()
    keep_photo(tools, jpeg)  # device://photo/last
    return jpeg


def keep_photo(tools, jpeg):
    """Keep `jpeg` as the last photo (the one before goes) if the heap allows."""
    tools.photo = None
    kept = True
    if hasattr(gc, "mem_free"):
        gc.collect()
        kept = gc.mem_free() >= PHOTO_HEAP_RESERVE
    if kept:
        tools.photo = jpeg
    tools.server.resource_updated(_PHOTO_URI)
    return kept


async def explain(tools, question, jpeg):
    """Upload a JPEG with the question (in that order, as backends expect); the answer text."""
    if tools.vision is None:
        if tools.vision_refused:
            raise RuntimeError("no vision service: the server's vision URL was refused (%s)"
                               % tools.vision_refused)
        raise RuntimeError("no vision service yet: the server has not sent a vision URL "
                           "in initialize")
    url, token = tools.vision
    from unet import http

    gc.collect()  # what loading the HTTP client left: the upload is a photo session's peak
    headers = {"Device-Id": tools.device_id, "Client-Id": tools.client_id}
    if token:
        headers["Authorization"] = bearer(token)
    try:
        status, body = await http.post_multipart(
            url, [("question", question)], ("file", "photo.jpg", "image/jpeg", jpeg),
            headers=headers, timeout=_TIMEOUT_S, ca=tools.ca)
    except Exception as e:  # the model sees this text: say what failed
        raise RuntimeError("vision service %s failed: %s"
                           % (url, str(e) or type(e).__name__))  # a timeout has no text
    finally:
        http = None
        forget_modules("unet.http", "unet.httpcore", "unet.conn")
    if status != 200:
        raise RuntimeError("vision service answered HTTP %d: %s" % (status, body[:200]))
    # The body goes back unchanged: backends read an {"action": ...} object in it as a
    # direct action (e.g. RESPONSE speaks the answer without another LLM round).
    return body
