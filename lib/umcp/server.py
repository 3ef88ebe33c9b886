"""McpServer: the MCP methods a device serves, over JSON-RPC 2.0, transport-agnostic.

The transport feeds `handle()` one message at a time and installs the callback
that carries replies and notifications out. Outgoing messages are never joined
into one string: the callback gets their pieces (an image's base64 among them)
and a streaming transport writes them where they are. Tool calls run one at a
time, in arrival order, each in its own asyncio task, so `handle()` keeps
answering ping, tools/list and cancellation while a slow tool works.
"""

import asyncio
import json

from .compat import const, dumps, get_logger, iscoroutine
from .schema import InvalidParams, is_int
from .tool import McpTool, error_result_pieces, result_pieces

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
# The version the xiaozhi protocol documents, for clients whose initialize omits it.
_DEFAULT_VERSION = "2024-11-05"
# From 2025-11-25 on, argument validation errors are tool results, not protocol errors
# (versions are ISO dates, so they compare as strings).
_ARGS_AS_RESULTS_FROM = "2025-11-25"

_PARSE_ERROR = const(-32700)
_INVALID_REQUEST = const(-32600)
_METHOD_NOT_FOUND = const(-32601)
_INVALID_PARAMS = const(-32602)
_INTERNAL_ERROR = const(-32603)

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Every response starts so, and its id follows.
_FRAME_OPEN = '{"jsonrpc":"2.0","id":'

_PAGE_END = "]}}"
# A page that has more after it ends with '],"nextCursor":"<tool name>"}}'. Tool
# names are plain ASCII that JSON needs not escape, so the name goes in as it is
# and this plus the name's length is the tail's byte size.
_MORE_HEAD = '],"nextCursor":"'
_MORE_END = '"}}'
_MORE_TAIL_BYTES = len(_MORE_HEAD) + len(_MORE_END)
_TOOLS_OPEN = ',"result":{"tools":['
_LIST_HEAD_BYTES = len(_FRAME_OPEN) + len(_TOOLS_OPEN)  # the id not counted

# Read only: the params of a message that carries none, without a new dict each time.
_NO_PARAMS = {}

_log = get_logger("umcp")


def _valid_id(value):
    return isinstance(value, str) or is_int(value)


def _same_id(a, b):
    # 1 and "1" are different ids.
    return type(a) is type(b) and a == b


def _describe(error):
    return str(error) or type(error).__name__


class _Call:
    """A tools/call request, queued or running."""

    def __init__(self, request_id, id_json, tool, args, progress_token):
        self.id = request_id
        self.id_json = id_json
        self.tool = tool
        self.args = args
        self.progress_token = progress_token
        self.last_progress = None
        self.task = None
        self.started = False
        self.cancelled = False
        self.answering = False


class McpServer:
    def __init__(self, name="umcp", version="0.1.0", page_limit=8000):
        self.name = name
        self.version = version
        self.page_limit = page_limit  # bytes of a whole tools/list frame, envelope included
        self._tools = []  # listing order: common tools first keeps the LLM's prompt cache warm
        self._sender = None
        self._overhead = 0
        self._vision = None
        self._protocol = None  # negotiated version; None until initialize
        self._min_log_level = 0
        self._queue = []
        self._running = None
        self._list_changed_pending = False
        # The largest message the transport accepts (bytes), announced in initialize as
        # capabilities.experimental.messageLimit.maxBytes; None: not announced.
        self.max_message = None

    # -- registration -------------------------------------------------------

    def add_tool(self, tool, description=None, properties=None, callback=None, **hints):
        """Register an McpTool, or build one from the same arguments McpTool takes."""
        if not isinstance(tool, McpTool):
            tool = McpTool(tool, description, properties, callback, **hints)
        if self._index(tool.name) >= 0:
            raise ValueError("a tool named %s is already registered" % tool.name)
        self._tools.append(tool)
        self._tools_changed()
        return tool

    def add_user_only_tool(self, name, description, properties, callback, **hints):
        """A tool for the user's console only: listed just with `withUserTools`."""
        return self.add_tool(McpTool(name, description, properties, callback, user_only=True, **hints))

    def remove_tool(self, name):
        index = self._index(name)
        if index < 0:
            raise KeyError(name)
        del self._tools[index]
        self._tools_changed()

    def set_sender(self, send, overhead=0):
        """`send(pieces)` (plain or async) carries one JSON-RPC message out: a list
        or tuple of str and bytes-like pieces of JSON text (`compat.join_pieces`
        makes them one str); `overhead` is the bytes the transport's envelope adds."""
        self._sender = send
        self._overhead = overhead

    def on_vision(self, fn):
        """`fn(url, token)` gets the vision endpoint an initialize request offers."""
        self._vision = fn
        return fn

    # -- outgoing -----------------------------------------------------------

    async def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send((dumps(message),))

    async def log(self, level, data, logger=None):
        """A notifications/message, unless the client set a higher level."""
        if level not in LOG_LEVELS:
            raise ValueError("unknown log level %s" % level)
        if LOG_LEVELS.index(level) < self._min_log_level:
            return
        params = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.notify("notifications/message", params)

    async def progress(self, progress, total=None, message=None):
        """Report progress of the running call; True if a notification went out.

        Only a call whose request carried `_meta.progressToken` gets progress, and
        the value must grow each time (the spec says so), else nothing is sent.
        """
        if not self.progress_requested():
            return False
        call = self._running
        if call.answering:
            return False
        if call.last_progress is not None and not progress > call.last_progress:
            _log.warning("progress %s does not exceed %s: not sent", progress, call.last_progress)
            return False
        call.last_progress = progress
        params = {"progressToken": call.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)
        return True

    def progress_requested(self):
        """Whether the running call carried `_meta.progressToken`: its client follows
        progress, so a long tool may keep it waiting (False outside a call)."""
        call = self._running
        return call is not None and call.progress_token is not None

    async def _send(self, pieces):
        if self._sender is None:
            _log.warning("no sender installed: dropped a message")
            return
        try:
            sent = self._sender(pieces)
            if iscoroutine(sent):
                await sent
        except Exception as e:  # a broken link must not stop the server
            _log.error("send failed: %s", _describe(e))

    # -- incoming -----------------------------------------------------------

    async def handle(self, payload):
        """Serve one incoming JSON-RPC message (dict, or JSON text or bytes).

        Never raises and never waits for a tool callback.
        """
        try:
            if isinstance(payload, (str, bytes, bytearray)):
                try:
                    payload = json.loads(payload)
                except ValueError:
                    await self._send(_error_frame("null", _PARSE_ERROR, "parse error: the message is not JSON"))
                    return
            if not isinstance(payload, dict):
                await self._send(_error_frame("null", _INVALID_REQUEST, "a message must be one JSON object"))
                return
            if "method" not in payload and ("result" in payload or "error" in payload):
                # We send no requests, so a response is the client's confusion.
                _log.info("ignored a response from the client (id %s)", payload.get("id"))
                return
            request_id = payload.get("id")
            id_json = dumps(request_id) if _valid_id(request_id) else "null"
            problem = _invalid_request(payload)
            if problem is not None:
                await self._send(_error_frame(id_json, _INVALID_REQUEST, problem))
            elif "id" not in payload:
                self._notification(payload["method"], payload.get("params", _NO_PARAMS))
            else:
                await self._request(request_id, id_json, payload["method"], payload.get("params", _NO_PARAMS))
        except Exception as e:  # a bug of ours must not stop the device
            _log.error("dropped a message: %s", _describe(e))

    def _notification(self, method, params):
        if method == "notifications/cancelled":
            self._cancel(params.get("requestId"))
        elif method != "notifications/initialized":
            _log.info("ignored notification %s", method)

    async def _request(self, request_id, id_json, method, params):
        # Each method gives the frame of its reply (None: a tool call answers later).
        try:
            if method == "tools/call":
                reply = self._call_tool(request_id, id_json, params)
            elif method == "tools/list":
                reply = self._list_tools(id_json, params)
            elif method == "ping":
                reply = _result_frame(id_json, _EMPTY_RESULT)
            elif method == "initialize":
                reply = await self._initialize(id_json, params)
            elif method == "logging/setLevel":
                level = params.get("level")
                if level not in LOG_LEVELS:
                    raise InvalidParams("unknown log level %s" % (level,))
                self._min_log_level = LOG_LEVELS.index(level)
                reply = _result_frame(id_json, _EMPTY_RESULT)
            else:
                # Answered at once: the SDK 2.x client probes server/discover this way.
                reply = _error_frame(id_json, _METHOD_NOT_FOUND, "method not found: " + method)
        except InvalidParams as e:
            reply = _error_frame(id_json, _INVALID_PARAMS, str(e))
        except Exception as e:
            _log.error("%s failed: %s", method, _describe(e))
            reply = _error_frame(id_json, _INTERNAL_ERROR, "internal error: " + _describe(e))
        if reply is not None:
            await self._send(reply)

    async def _initialize(self, id_json, params):
        requested = params.get("protocolVersion", _DEFAULT_VERSION)
        if not isinstance(requested, str):
            raise InvalidParams("protocolVersion must be a string")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        capabilities = params.get("capabilities")
        vision = capabilities.get("vision") if isinstance(capabilities, dict) else None
        if isinstance(vision, dict) and isinstance(vision.get("url"), str):
            await self._offer_vision(vision["url"], vision.get("token"))
        self._protocol = version
        offered = {"tools": {"listChanged": True}, "logging": {}}
        if self.max_message:
            offered["experimental"] = {"messageLimit": {"maxBytes": self.max_message}}
        result = {
            "protocolVersion": version,
            "capabilities": offered,
            "serverInfo": {"name": self.name, "version": self.version},
        }
        return _result_frame(id_json, (dumps(result),))

    async def _offer_vision(self, url, token):
        if self._vision is None:
            return
        try:
            done = self._vision(url, token if isinstance(token, str) else "")
            if iscoroutine(done):
                await done
        except Exception as e:
            _log.error("vision callback failed: %s", _describe(e))

    # -- tools/list ---------------------------------------------------------

    def _list_tools(self, id_json, params):
        """The pieces of one page: as many tools as fit in `page_limit`, envelope included."""
        cursor = params.get("cursor")
        with_user_tools = params.get("withUserTools") is True
        start = 0
        if cursor is not None and cursor != "":
            start = self._index(cursor) if isinstance(cursor, str) else -1
            if start < 0:
                raise InvalidParams("invalid cursor %s" % dumps(cursor))
        # A string id may hold non-ASCII characters, which MicroPython's json leaves unescaped.
        budget = self.page_limit - self._overhead - _LIST_HEAD_BYTES - len(id_json.encode())
        pieces = [_FRAME_OPEN, id_json, _TOOLS_OPEN]
        used = 0  # bytes of the tool entries and their commas
        tools = self._tools
        index = self._next_listed(start, with_user_tools)
        while index >= 0:
            after = self._next_listed(index + 1, with_user_tools)
            size = used + (1 if used else 0) + tools[index].json_bytes
            tail = len(_PAGE_END) if after < 0 else _MORE_TAIL_BYTES + len(tools[after].name)
            if size + tail > budget:
                break
            if used:
                pieces.append(",")
            pieces.append(tools[index].json)
            used = size
            index = after
        if index < 0:
            pieces.append(_PAGE_END)
        elif used == 0:
            tool = tools[index]
            return _error_frame(id_json, _INTERNAL_ERROR,
                                "tool %s (%d bytes) does not fit in a tools/list page of %d bytes"
                                % (tool.name, tool.json_bytes, self.page_limit))
        else:
            pieces.append(_MORE_HEAD)
            pieces.append(tools[index].name)
            pieces.append(_MORE_END)
        return pieces

    def _index(self, name):
        tools = self._tools
        for index in range(len(tools)):
            if tools[index].name == name:
                return index
        return -1

    def _next_listed(self, start, with_user_tools):
        for index in range(start, len(self._tools)):
            if with_user_tools or not self._tools[index].user_only:
                return index
        return -1

    def _tools_changed(self):
        if self._protocol is None or self._list_changed_pending:
            return
        # One notification for a burst of changes: the task runs after them.
        self._list_changed_pending = True
        asyncio.create_task(self._announce_list_changed())

    async def _announce_list_changed(self):
        self._list_changed_pending = False
        await self.notify("notifications/tools/list_changed")

    # -- tools/call ---------------------------------------------------------

    def _call_tool(self, request_id, id_json, params):
        """Queue the call (its task answers it); the frame of an argument error from 2025-11-25."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs the tool name")
        index = self._index(name)
        if index < 0:
            raise InvalidParams("unknown tool " + name)
        tool = self._tools[index]
        try:
            args = tool.properties.validate(params.get("arguments"))
        except InvalidParams as e:
            if self._protocol is None or self._protocol < _ARGS_AS_RESULTS_FROM:
                raise
            return _result_frame(id_json, error_result_pieces(str(e)))
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._queue.append(_Call(request_id, id_json, tool, args, token if _valid_id(token) else None))
        if self._running is None:
            self._start_next()
        return None

    def _start_next(self):
        self._running = self._queue.pop(0) if self._queue else None
        if self._running is not None:
            self._running.task = asyncio.create_task(self._run(self._running))

    async def _run(self, call):
        try:
            # A task cancelled before its first step never enters its body (so
            # never reaches `finally`): a not-yet-started call is only flagged.
            if call.cancelled:
                return
            call.started = True
            try:
                value = call.tool.callback(call.args)
                if iscoroutine(value):
                    value = await value
                pieces = result_pieces(value)
            except Exception as e:  # CancelledError is no Exception: it goes to the outer try
                _log.warning("tool %s failed: %s", call.tool.name, _describe(e))
                pieces = error_result_pieces(_describe(e))
            if not call.cancelled:  # a tool may have swallowed its cancellation
                call.answering = True
                await self._send(_result_frame(call.id_json, pieces))
        except asyncio.CancelledError:
            pass  # cancelled by the client: it expects no response
        finally:
            self._start_next()

    def _cancel(self, request_id):
        if not _valid_id(request_id):
            return
        call = self._running
        if call is not None and _same_id(call.id, request_id):
            if not call.answering:  # too late once the response is on its way
                call.cancelled = True
                if call.started:
                    call.task.cancel()
            return
        for index, call in enumerate(self._queue):
            if _same_id(call.id, request_id):
                del self._queue[index]
                return


_EMPTY_RESULT = ("{}",)


def _result_frame(id_json, pieces):
    """A response's pieces around the pieces of its result, which stay as they are."""
    frame = [_FRAME_OPEN, id_json, ',"result":']
    frame.extend(pieces)
    frame.append("}")
    return frame


def _error_frame(id_json, code, message):
    return ('{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}' % (id_json, code, dumps(message)),)


def _invalid_request(message):
    """Why `message` is not a valid JSON-RPC 2.0 request or notification, or None."""
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return "id must be a string or an integer"
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if not isinstance(message.get("params", _NO_PARAMS), dict):
        return "params must be an object"
    return None


_instance = None


def get_instance():
    """The device's one server."""
    global _instance
    if _instance is None:
        _instance = McpServer()
    return _instance
