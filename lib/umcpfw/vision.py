"""The camera's tools and the vision service client: photos go to the URL and token the
backend sent in initialize. Loaded only on a board with a camera (umcpfw.boot), and
resident there: initialize configures it (McpServer.on_vision)."""

import gc

from umcp.compat import call_then_forget, const, forget_modules, get_logger
from umcp.tool import ImageContent
from xiaozhi.link import bearer

_TIMEOUT_S = const(30)
# A photo is kept after it is taken only while this much heap stays free besides it
# (where the heap can be asked: MicroPython).
PHOTO_HEAP_RESERVE = const(48 * 1024)
_PHOTO_URI = "device://photo/last"  # umcpfw.resources

_log = get_logger("vision")


class VisionClient:
    """The camera of `tools` (the board's CommonTools: its board, and where the last photo
    is kept) and the vision service that explains its photos; `ca`: what an https vision
    URL must chain to."""

    def __init__(self, tools, ca=None):
        self.tools = tools
        self.ca = ca  # for an https vision URL
        self.url = None
        self.token = ""
        self.refused = None  # why the server's vision URL was refused, if it was

    def configure(self, url, token):
        """server.on_vision callback: the backend told us where to send photos. A URL that
        is not a usable http(s) URL (or carries spaces or control characters, which would
        add header lines to the upload) is refused and logged; explain() then says why."""
        try:
            if call_then_forget("unet.conn", "parse_url", url)[0] not in ("http", "https"):
                raise ValueError("not an HTTP URL: %r" % (url,))
        except ValueError as e:
            _log.error("refused the server's vision URL: %s", e)
            self.url = None
            self.refused = str(e)
            return
        self.url = url
        self.token = token
        self.refused = None

    async def take_photo(self, args):
        """self.camera.take_photo: the photo and the question to the vision service."""
        jpeg = self.capture()  # raises OSError when the capture fails
        return await self.explain(args["question"], jpeg)

    def get_photo(self, args):
        """self.camera.get_photo: the JPEG itself, as an MCP image."""
        return ImageContent(self.capture(), "image/jpeg")

    def capture(self):
        jpeg = self.tools.board.camera.capture()
        self.keep_photo(jpeg)  # device://photo/last
        return jpeg

    def keep_photo(self, jpeg):
        """Keep `jpeg` as the last photo (the one before goes) if the heap allows."""
        tools = self.tools
        tools.photo = None
        kept = True
        if hasattr(gc, "mem_free"):
            gc.collect()
            kept = gc.mem_free() >= PHOTO_HEAP_RESERVE
        if kept:
            tools.photo = jpeg
        tools.server.resource_updated(_PHOTO_URI)
        return kept

    async def explain(self, question, jpeg):
        """Upload a JPEG with the question (in that order, as backends expect); the answer text."""
        if not self.url:
            if self.refused:
                raise RuntimeError("no vision service: the server's vision URL was refused (%s)"
                                   % self.refused)
            raise RuntimeError("no vision service yet: the server has not sent a vision URL "
                               "in initialize")
        from unet import http  # at the first photo: a session may never take one

        headers = {"Device-Id": self.tools.device_id, "Client-Id": self.tools.client_id}
        if self.token:
            headers["Authorization"] = bearer(self.token)
        try:
            status, body = await http.post_multipart(
                self.url, [("question", question)], ("file", "photo.jpg", "image/jpeg", jpeg),
                headers=headers, timeout=_TIMEOUT_S, ca=self.ca)
        except Exception as e:  # the model sees this text: say what failed
            raise RuntimeError("vision service %s failed: %s"
                               % (self.url, str(e) or type(e).__name__))  # a timeout has no text
        finally:
            http = None
            # A photo is rare: its client leaves the heap again.
            forget_modules("unet.http", "unet.httpcore", "unet.conn")
        if status != 200:
            raise RuntimeError("vision service answered HTTP %d: %s" % (status, body[:200]))
        # The body goes back unchanged: backends read an {"action": ...} object in it as a
        # direct action (e.g. RESPONSE speaks the answer without another LLM round).
        return body
