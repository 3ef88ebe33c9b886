# The vision service client: photos go to the URL and token the backend sent in initialize.
from umcp.compat import const, forget_modules, get_logger
from unet import conn
from xiaozhi.link import bearer

_TIMEOUT_S = const(30)

_log = get_logger("vision")


class VisionClient:
    def __init__(self, device_id, client_id, ca=None):
        self.device_id = device_id
        self.ca = ca  # for an https vision URL
        self.client_id = client_id
        self.url = None
        self.token = ""
        self.refused = None  # why the server's vision URL was refused, if it was

    def configure(self, url, token):
        """server.on_vision callback: the backend told us where to send photos. A URL that
        is not a usable http(s) URL (or carries spaces or control characters, which would
        add header lines to the upload) is refused and logged; explain() then says why."""
        try:
            if conn.parse_url(url)[0] not in ("http", "https"):
                raise ValueError("not an HTTP URL: %r" % (url,))
        except ValueError as e:
            _log.error("refused the server's vision URL: %s", e)
            self.url = None
            self.refused = str(e)
            return
        self.url = url
        self.token = token
        self.refused = None

    async def explain(self, question, jpeg):
        """Upload a JPEG with the question (in that order, as backends expect); the answer text."""
        if not self.url:
            if self.refused:
                raise RuntimeError("no vision service: the server's vision URL was refused (%s)"
                                   % self.refused)
            raise RuntimeError("no vision service yet: the server has not sent a vision URL "
                               "in initialize")
        from unet import http  # at the first photo: a session may never take one

        headers = {"Device-Id": self.device_id, "Client-Id": self.client_id}
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
            forget_modules("unet.http", "unet.httpcore")
        if status != 200:
            raise RuntimeError("vision service answered HTTP %d: %s" % (status, body[:200]))
        # The body goes back unchanged: backends read an {"action": ...} object in it as a
        # direct action (e.g. RESPONSE speaks the answer without another LLM round).
        return body
