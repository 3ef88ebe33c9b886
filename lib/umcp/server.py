"""McpServer: the MCP methods a device serves, over JSON-RPC 2.0, transport-agnostic.

The transport feeds `handle()` one message at a time and installs the callback
that carries replies and notifications out. Tool calls run one at a time, in
arrival order, each in its own asyncio task, so `handle()` keeps answering
ping, tools/list and cancellation while a slow tool works.
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
# From 2025-11-25 on, argument validation errors are tool results, not protocol errors.
_ARGS_AS_RESULTS_FROM = SUPPORTED_VERSIONS.index("2025-11-25")

_PARSE_ERROR = const(-32700)
_INVALID_REQUEST = const(-32600)
_METHOD_NOT_FOUND = const(-32601)
_INVALID_PARAMS = const(-32602)
_INTERNAL_ERROR = const(-32603)

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_PAGE_END = "]}}"
# A page that has more after it ends with '],"nextCursor":"<tool name>"}}'; tool
# names are plain ASCII, so this plus the name's length is the tail's byte size.
_MORE_TAIL_BYTES = len('],"nextCursor":""}}')

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
        """`send(text)` (plain or async) carries one JSON-RPC message out;
        `overhead` is the bytes the transport's envelope adds to it."""
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
        await self._send(dumps(message))

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
        call = self._running
        if call is None or call.progress_token is None or call.answering:
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

    async def _send(self, text):
        if self._sender is None:
            _log.warning("no sender installed: dropped %d characters", len(text))
            return
        try:
            sent = self._sender(text)
            if iscoroutine(sent):
                await sent
        except Exception as e:  # a broken link must not stop the server
            _log.error("send failed: %s", _describe(e))

    async def _send_result(self, id_json, pieces):
        # One join, so a large result (an image) is copied into its frame once.
        frame = ['{"jsonrpc":"2.0","id":', id_json, ',"result":']
        frame.extend(pieces)
        frame.append("}")
        await self._send("".join(frame))

    async def _send_error(self, id_json, code, message):
        await self._send('{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}'
                         % (id_json, code, dumps(message)))

    # -- incoming -----------------------------------------------------------

    async def handle(self, payload):
        """Serve one incoming JSON-RPC message (dict, or JSON text or bytes).

        Never raises and never waits for a tool callback.
        """
        try:
            await self._handle(payload)
        except Exception as e:  # a bug of ours must not stop the device
            _log.error("dropped a message: %s", _describe(e))

    async def _handle(self, payload):
        if isinstance(payload, (str, bytes, bytearray)):
            try:
                payload = json.loads(payload)
            except ValueError:
                await self._send_error("null", _PARSE_ERROR, "parse error: the message is not JSON")
                return
        if not isinstance(payload, dict):
            await self._send_error("null", _INVALID_REQUEST, "a message must be one JSON object")
            return
        if "method" not in payload and ("result" in payload or "error" in payload):
            # We send no requests, so a response is the client's confusion.
            _log.info("ignored a response from the client (id %s)", payload.get("id"))
            return
        request_id = payload.get("id")
        id_json = dumps(request_id) if _valid_id(request_id) else "null"
        problem = _invalid_request(payload)
        if problem is not None:
            await self._send_error(id_json, _INVALID_REQUEST, problem)
            return
        method = payload["method"]
        params = payload.get("params", {})
        if "id" not in payload:
            self._notification(method, params)
            return
        try:
            await self._request(request_id, id_json, method, params)
        except InvalidParams as e:
            await self._send_error(id_json, _INVALID_PARAMS, str(e))
        except Exception as e:
            _log.error("%s failed: %s", method, _describe(e))
            await self._send_error(id_json, _INTERNAL_ERROR, "internal error: " + _describe(e))

    def _notification(self, method, params):
        if method == "notifications/cancelled":
            self._cancel(params.get("requestId"))
        elif method != "notifications/initialized":
            _log.info("ignored notification %s", method)

    async def _request(self, request_id, id_json, method, params):
        if method == "tools/call":
            await self._call_tool(request_id, id_json, params)
        elif method == "tools/list":
            await self._list_tools(id_json, params)
        elif method == "ping":
            await self._send_result(id_json, ("{}",))
        elif method == "initialize":
            await self._initialize(id_json, params)
        elif method == "logging/setLevel":
            level = params.get("level")
            if level not in LOG_LEVELS:
                raise InvalidParams("unknown log level %s" % (level,))
            self._min_log_level = LOG_LEVELS.index(level)
            await self._send_result(id_json, ("{}",))
        else:
            # Answered at once: the SDK 2.x client probes server/discover this way.
            await self._send_error(id_json, _METHOD_NOT_FOUND, "method not found: " + method)

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
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": self.name, "version": self.version},
        }
        await self._send_result(id_json, (dumps(result),))

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

    async def _list_tools(self, id_json, params):
        cursor = params.get("cursor")
        with_user_tools = params.get("withUserTools") is True
        start = 0
        if cursor is not None and cursor != "":
            start = self._index(cursor) if isinstance(cursor, str) else -1
            if start < 0:
                raise InvalidParams("invalid cursor %s" % dumps(cursor))
        head = '{"jsonrpc":"2.0","id":' + id_json + ',"result":{"tools":['
        budget = self.page_limit - self._overhead - len(head.encode())
        pieces = [head]
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
            await self._send_error(id_json, _INTERNAL_ERROR,
                                   "tool %s (%d bytes) does not fit in a tools/list page of %d bytes"
                                   % (tool.name, tool.json_bytes, self.page_limit))
            return
        else:
            pieces.append('],"nextCursor":' + dumps(tools[index].name) + "}}")
        await self._send("".join(pieces))

    def _index(self, name):
        for index, tool in enumerate(self._tools):
            if tool.name == name:
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

    async def _call_tool(self, request_id, id_json, params):
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
            if self._protocol is None or SUPPORTED_VERSIONS.index(self._protocol) < _ARGS_AS_RESULTS_FROM:
                raise
            await self._send_result(id_json, error_result_pieces(str(e)))
            return
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._queue.append(_Call(request_id, id_json, tool, args, token if _valid_id(token) else None))
        if self._running is None:
            self._start_next()

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
            pieces = await self._invoke(call)
            if not call.cancelled:  # a tool may have swallowed its cancellation
                call.answering = True
                await self._send_result(call.id_json, pieces)
        except asyncio.CancelledError:
            pass  # cancelled by the client: it expects no response
        finally:
            self._start_next()

    async def _invoke(self, call):
        try:
            value = call.tool.callback(call.args)
            if iscoroutine(value):
                value = await value
            return result_pieces(value)
        except Exception as e:  # CancelledError is no Exception: it passes on to _run
            _log.warning("tool %s failed: %s", call.tool.name, _describe(e))
            return error_result_pieces(_describe(e))

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


def _invalid_request(message):
    """Why `message` is not a valid JSON-RPC 2.0 request or notification, or None."""
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return "id must be a string or an integer"
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if not isinstance(message.get("params", {}), dict):
        return "params must be an object"
    return None


_instance = None


def get_instance():
    """The device's one server."""
    global _instance
    if _instance is None:
        _instance = McpServer()
    return _instance
