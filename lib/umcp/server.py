"""McpServer: the MCP methods a device serves, over JSON-RPC 2.0, transport-agnostic.

Each client is a Session: a transport makes one (`server.session(send)`), feeds its
`handle()` one message at a time, and the session's `send` carries its replies and
notifications out. Several transports serve the same tools at once (the xiaozhi link,
an MCP endpoint, HTTP clients), each client with its own negotiated revision, log
level, subscriptions and request ids. Outgoing messages are never joined into one
string: `send` gets their pieces (an image's base64 among them) and a streaming
transport writes them where they are. Tool calls run one at a time, in arrival order
across all sessions, each in its own asyncio task, so `handle()` keeps answering
ping, tools/list and cancellation while a slow tool works.

Two eras of the protocol are served side by side: the legacy one (an `initialize`
handshake negotiates 2024-11-05 .. 2025-11-25) and revision 2026-07-28, where
each request names its version in `params._meta` and no handshake happens. The
era is decided per request, from that one `_meta` key, without allocating.
"""

import asyncio

from . import __version__
from .compat import const, dumps, get_logger, iscoroutine
from .jsonin import loads
from .names import same
from .rpc import (CACHE_HINTS, EMPTY_RESULT, FRAME_OPEN, INTERNAL_ERROR, INVALID_PARAMS,
                  INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_VERSION, describe,
                  error_frame, find, result_frame, valid_id)
from .schema import InvalidParams
from .tool import McpTool, error_result_pieces, result_pieces

# The versions an initialize handshake negotiates (the legacy era).
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
# Revision 2026-07-28: no handshake; every request carries its version in _meta.
MODERN_VERSION = "2026-07-28"
# What server/discover and the unsupported-version error list, newest first.
ALL_VERSIONS = (MODERN_VERSION,) + tuple(reversed(SUPPORTED_VERSIONS))
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
# The version the xiaozhi protocol documents, for clients whose initialize omits it.
_DEFAULT_VERSION = "2024-11-05"
# From 2025-11-25 on, argument validation errors are tool results, not protocol errors
# (versions are ISO dates, so they compare as strings).
_ARGS_AS_RESULTS_FROM = "2025-11-25"
# From 2025-06-18 on, tools have output schemas and results structuredContent.
_STRUCTURED_FROM = "2025-06-18"

# At most this many resources/subscribe URIs are remembered (each costs its string).
MAX_SUBSCRIPTIONS = const(8)
# At most this many tool calls of one client wait behind the running one; more are refused
# at once (a flood must not fill the heap, nor hold up the other clients' calls for long).
MAX_QUEUED_CALLS = const(8)
# JSON-RPC's range for implementation-defined server errors: the client's calls are queued
# to the limit already.
BUSY = const(-32000)

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_PAGE_END = "]}}"
_PAGE_END_MODERN = "]" + CACHE_HINTS + "}}"
# A page that has more after it ends with '],"nextCursor":"<key>"}}'. Keys (tool
# names, resource URIs and URI templates) are plain ASCII that JSON needs not
# escape, so the key goes in as it is and this plus its length is the tail's size.
_MORE_HEAD = '],"nextCursor":"'
_MORE_END = '"}}'
_MORE_END_MODERN = '"' + CACHE_HINTS + "}}"
_TOOLS_OPEN = ',"result":{"tools":['
_RESOURCES_OPEN = ',"result":{"resources":['
_TEMPLATES_OPEN = ',"result":{"resourceTemplates":['

# Read only: the params of a message that carries none, without a new dict each time.
_NO_PARAMS = {}

_log = get_logger("umcp")


def _same_id(a, b):
    # 1 and "1" are different ids.
    return type(a) is type(b) and a == b


class Session:
    """One client of the server: where its messages go and what it negotiated.

    Made by `McpServer.session()`; the transport calls `handle()` for each message the
    client sent and `close()` when the client is gone. `send(pieces)` (plain or async)
    carries one JSON-RPC message to the client: a list or tuple of str and bytes-like
    pieces of JSON text (`compat.join_pieces` makes them one str). `overhead`: the bytes
    the transport's envelope adds to a message; `page_limit`: the largest list frame,
    envelope included (None: the server's); `max_message`: the largest message the
    transport accepts, announced in initialize (None: the server's); `offered`: which
    tools this client sees and may call, `offered(tool) -> bool`, each listed whatever
    `withUserTools` says (None: every tool, the user-only ones listed on `withUserTools`).
    A transport whose clients need tool names of `^[a-zA-Z0-9_-]{1,64}$` sets `portable`
    (umcp.names): tools/list gives them so; tools/call takes either form on every session.
    """

    portable = False  # tools/list names in the portable form (a class default: no heap)

    def __init__(self, server, send=None, overhead=0, page_limit=None, max_message=None,
                 offered=None):
        self.server = server
        self.offered = offered
        self.refusing = False  # its calls are being refused as over MAX_QUEUED_CALLS
        self.send = send
        self.overhead = overhead
        self.page_limit = page_limit
        self.max_message = max_message
        self.protocol = None  # negotiated legacy version; None until initialize
        self.modern = False  # its latest request came in revision 2026-07-28's form
        self.min_log_level = 0
        self.subscriptions = []  # URIs it subscribed to (legacy revisions; at most MAX_SUBSCRIPTIONS)
        self.updated = []  # subscribed URIs whose notification is on its way

    def set_sender(self, send, overhead=0):
        self.send = send
        self.overhead = overhead

    async def handle(self, payload):
        """Serve one message from this client (see McpServer.handle)."""
        await self.server.handle(payload, self)

    async def parse_error(self, reason):
        """-32700 to this client for a message nobody could read."""
        await self.server.parse_error(reason, self)

    def cancel_calls(self):
        """Cancel this client's tool calls still owed a response (McpServer.cancel_calls)."""
        return self.server.cancel_calls(self)

    def close(self):
        """The client is gone: its calls are cancelled, and nothing more is sent to it.
        Returns how many calls were cancelled."""
        count = self.cancel_calls()
        sessions = self.server._sessions
        if self in sessions:
            sessions.remove(self)
        return count


class _Call:
    """A tools/call request, queued or running."""

    def __init__(self, session, request_id, id_json, tool, args, progress_token, modern, log_level):
        self.session = session
        self.id = request_id
        self.id_json = id_json
        self.tool = tool
        self.args = args
        self.progress_token = progress_token
        self.modern = modern  # came in revision 2026-07-28's form
        self.log_level = log_level  # its _meta logLevel (an index of LOG_LEVELS), or None
        self.last_progress = None
        self.task = None
        self.started = False
        self.cancelled = False
        self.answering = False


class McpServer:
    def __init__(self, name="umcp", version=__version__, page_limit=8000):
        self.name = name
        self.version = version
        self.page_limit = page_limit  # bytes of a whole tools/list frame, envelope included
        self._tools = []  # listing order: common tools first keeps the LLM's prompt cache warm
        self._resources = []
        self._templates = []
        self._later = []  # add_resources_later's registrations, run at the first resources/*
        self._vision = None
        # The clients; the first is the default session, which handle() and set_sender()
        # without a session use (a server with one transport needs no other).
        self.default = Session(self)
        self._sessions = [self.default]
        self._queue = []
        self._running = None
        self._list_changed_pending = False
        self._resources_changed_pending = False
        # The largest message a transport accepts (bytes), announced in initialize as
        # capabilities.experimental.messageLimit.maxBytes; None: not announced. A session
        # may say its own.
        self.max_message = None
        # Called as on_call(tool name, ok) after each tool's callback returned or raised
        # (a status screen shows the last call): it must return at once and never raise.
        self.on_call = None

    def session(self, send=None, overhead=0, page_limit=None, max_message=None, offered=None):
        """A new client's Session (see Session); it gets notifications until closed."""
        session = Session(self, send, overhead, page_limit, max_message, offered)
        self._sessions.append(session)
        return session

    # -- registration -------------------------------------------------------

    def add_tool(self, tool, description=None, properties=None, callback=None, **hints):
        """Register an McpTool, or build one from the same arguments McpTool takes."""
        if not isinstance(tool, McpTool):
            tool = McpTool(tool, description, properties, callback, **hints)
        for known in self._tools:
            # Two names with one portable form (self.a_b, self_a.b) could not be told
            # apart by a client that needs it: refused like a duplicate.
            if same(known.name, tool.name):
                raise ValueError("a tool named %s is already registered%s" % (
                    known.name, "" if known.name == tool.name else " (the same as %s for clients "
                    "that need names without dots)" % tool.name))
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

    # Resources: umcp.resource holds their code, imported at the first resource, so a
    # device without any pays nothing for it.

    def add_resource(self, uri, name=None, read=None, description=None, mime_type=None):
        """Register an McpResource, or build one from the arguments McpResource takes."""
        from .resource import McpResource

        resource = uri if isinstance(uri, McpResource) else McpResource(uri, name, read, description, mime_type)
        if find(self._resources, "uri", resource.uri) >= 0:
            raise ValueError("a resource at %s is already registered" % resource.uri)
        self._resources.append(resource)
        self._resources_changed()
        return resource

    def add_resources_later(self, register):
        """`register(server)` adds resources (add_resource, add_resource_template) when a
        client first sends a resources/* request: until then neither they nor umcp.resource's
        code take heap (a session may never ask). Initialize announces the resources
        capability meanwhile, and the late registration announces no list change."""
        self._later.append(register)

    def _load_resources(self):
        later = self._later
        if later:
            self._later = []
            pending = self._resources_changed_pending
            self._resources_changed_pending = True  # nobody has seen the list yet
            try:
                for register in later:
                    register(self)
            finally:
                self._resources_changed_pending = pending

    def add_resource_template(self, uri_template, name=None, read=None, description=None, mime_type=None):
        """Register an McpResourceTemplate, or build one from its arguments."""
        from .resource import McpResourceTemplate

        template = uri_template
        if not isinstance(template, McpResourceTemplate):
            template = McpResourceTemplate(uri_template, name, read, description, mime_type)
        if find(self._templates, "uri_template", template.uri_template) >= 0:
            raise ValueError("a resource template %s is already registered" % template.uri_template)
        self._templates.append(template)
        self._resources_changed()
        return template

    def remove_resource(self, uri):
        self._load_resources()
        index = find(self._resources, "uri", uri)
        if index < 0:
            raise KeyError(uri)
        del self._resources[index]
        for session in self._sessions:
            if uri in session.subscriptions:
                session.subscriptions.remove(uri)
        self._resources_changed()

    def remove_resource_template(self, uri_template):
        self._load_resources()
        index = find(self._templates, "uri_template", uri_template)
        if index < 0:
            raise KeyError(uri_template)
        del self._templates[index]
        self._resources_changed()

    def find_resource(self, uri):
        """(the resource or template serving `uri`, the template's variables or None), or
        None when none does; InvalidParams when `uri` is not a string."""
        if not isinstance(uri, str):
            raise InvalidParams("uri must be a string")
        index = find(self._resources, "uri", uri)
        if index >= 0:
            return self._resources[index], None
        for template in self._templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def _subscribe(self, session, id_json, uri):
        """The frame answering resources/subscribe (legacy revisions only)."""
        if self.find_resource(uri) is None:
            from .resource import not_found_frame

            return not_found_frame(id_json, uri, False)
        subscriptions = session.subscriptions
        if uri not in subscriptions:
            if len(subscriptions) >= MAX_SUBSCRIPTIONS:
                raise InvalidParams("too many subscriptions (at most %d)" % MAX_SUBSCRIPTIONS)
            subscriptions.append(uri)
        return result_frame(id_json, EMPTY_RESULT)

    def resource_updated(self, uri):
        """Tell the clients that subscribed to `uri` that it changed (from a task: needs
        the loop). Costs nothing when nobody subscribed; returns whether one will be told."""
        told = False
        for session in self._sessions:
            if uri in session.subscriptions:
                told = True
                if uri not in session.updated:
                    session.updated.append(uri)
                    if len(session.updated) == 1:
                        asyncio.create_task(self._announce_updated(session))
        return told

    async def _announce_updated(self, session):
        while session.updated:
            uri = session.updated.pop(0)
            await self._send(session, ('{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":',
                                       dumps(uri), "}}"))

    def _resources_changed(self):
        if self._resources_changed_pending or not self._initialized():
            return
        self._resources_changed_pending = True
        asyncio.create_task(self._announce_resources_changed())

    async def _announce_resources_changed(self):
        self._resources_changed_pending = False
        await self._to_initialized('{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}')

    def _initialized(self):
        """Whether a client initialized (only they hear of list changes)."""
        for session in self._sessions:
            if session.protocol is not None:
                return True
        return False

    async def _to_initialized(self, message):
        for session in self._sessions[:]:  # a send may end a session
            if session.protocol is not None and session.send is not None:
                await self._send(session, (message,))

    def set_sender(self, send, overhead=0):
        """The default session's `send(pieces)` and envelope `overhead` (see Session)."""
        self.default.set_sender(send, overhead)

    def on_vision(self, fn):
        """`fn(url, token)` gets the vision endpoint an initialize request offers."""
        self._vision = fn
        return fn

    # -- outgoing -----------------------------------------------------------

    async def notify(self, method, params=None, session=None):
        """A notification to `session`, or to every client."""
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        pieces = (dumps(message),)
        if session is not None:
            await self._send(session, pieces)
            return
        for session in self._sessions[:]:  # a send may end a session
            if session.send is not None:  # a default session no transport uses
                await self._send(session, pieces)

    async def log(self, level, data, logger=None):
        """A notifications/message, to the client of the running call, or outside a call
        to every client; each unless it set a higher level.

        Revision 2026-07-28 makes logging request-scoped: during a call that came in
        that form, only if its `_meta` asked for this level or a lower one; outside a
        call, nothing to a client whose latest request came in that form.
        """
        if level not in LOG_LEVELS:
            raise ValueError("unknown log level %s" % level)
        rank = LOG_LEVELS.index(level)
        call = self._running
        params = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        if call is not None:
            if call.modern:
                if call.log_level is None or rank < call.log_level or call.answering:
                    return
            elif rank < call.session.min_log_level:
                return
            await self.notify("notifications/message", params, call.session)
            return
        for session in self._sessions[:]:
            if rank >= session.min_log_level and not session.modern and session.send is not None:
                await self.notify("notifications/message", params, session)

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
        await self.notify("notifications/progress", params, call.session)
        return True

    def progress_requested(self):
        """Whether the running call carried `_meta.progressToken`: its client follows
        progress, so a long tool may keep it waiting (False outside a call)."""
        call = self._running
        return call is not None and call.progress_token is not None

    async def _send(self, session, pieces):
        if session.send is None:
            _log.warning("no sender installed: dropped a message")
            return
        try:
            sent = session.send(pieces)
            if iscoroutine(sent):
                await sent
        except Exception as e:  # a broken link must not stop the server
            _log.error("send failed: %s", describe(e))

    # -- incoming -----------------------------------------------------------

    async def parse_error(self, reason, session=None):
        """Answer a message that could not be parsed: -32700 with a null id (no id
        could be read), `reason` saying why (umcp.jsonin's words)."""
        _log.warning("unparsable message: %s", reason)
        await self._send(session or self.default, error_frame("null", PARSE_ERROR, "parse error: " + reason))

    async def handle(self, payload, session=None):
        """Serve one incoming JSON-RPC message (dict, or JSON text or bytes) from
        `session` (None: the default session).

        Never raises and never waits for a tool callback.
        """
        if session is None:
            session = self.default
        try:
            if isinstance(payload, (str, bytes, bytearray, memoryview)):
                try:
                    payload = loads(payload)
                except ValueError as e:
                    await self.parse_error(str(e), session)
                    return
            if not isinstance(payload, dict):
                await self._send(session, error_frame("null", INVALID_REQUEST, "a message must be one JSON object"))
                return
            if "method" not in payload and ("result" in payload or "error" in payload):
                # We send no requests, so a response is the client's confusion.
                _log.info("ignored a response from the client (id %s)", payload.get("id"))
                return
            request_id = payload.get("id")
            id_json = dumps(request_id) if valid_id(request_id) else "null"
            problem = _invalid_request(payload)
            if problem is not None:
                await self._send(session, error_frame(id_json, INVALID_REQUEST, problem))
            elif "id" not in payload:
                self._notification(session, payload["method"], _params(payload))
            else:
                await self._request(session, request_id, id_json, payload["method"],
                                    _params(payload))
        except Exception as e:  # a bug of ours must not stop the device
            _log.error("dropped a message: %s", describe(e))

    def _notification(self, session, method, params):
        if method == "notifications/cancelled":
            self._cancel(session, params.get("requestId"))
        elif method != "notifications/initialized":
            _log.info("ignored notification %s", method)

    async def _request(self, session, request_id, id_json, method, params):
        # Each method gives the frame of its reply (None: a tool call answers later).
        try:
            # The era of this request: revision 2026-07-28 names itself in _meta.
            meta = params.get("_meta")
            requested = meta.get(_META_VERSION) if isinstance(meta, dict) else None
            modern = requested == MODERN_VERSION
            if requested is not None and not modern and requested not in SUPPORTED_VERSIONS:
                await self._send(session, _unsupported_version_frame(id_json, requested))
                return
            log_level = None
            if modern:
                session.modern = True
                level = meta.get(_META_LOG_LEVEL)
                if level is not None:
                    if level not in LOG_LEVELS:
                        raise InvalidParams("unknown log level %s" % (level,))
                    log_level = LOG_LEVELS.index(level)
            if method.startswith("resources/"):
                self._load_resources()
            if method == "tools/call":
                reply = self._call_tool(session, request_id, id_json, params, modern, log_level)
            elif method == "tools/list":
                reply = self._page(session, id_json, params, self._tools, "name", _TOOLS_OPEN, modern,
                                   session.offered)
            elif method == "resources/read":
                from .resource import read

                uri = params.get("uri")
                reply = await read(self.find_resource(uri), uri, id_json, modern)
            elif method == "resources/list":
                reply = self._page(session, id_json, params, self._resources, "uri", _RESOURCES_OPEN, modern)
            elif method == "resources/templates/list":
                reply = self._page(session, id_json, params, self._templates, "uri_template", _TEMPLATES_OPEN,
                                   modern)
            elif method == "server/discover":
                reply = self._discover(id_json)
            elif modern and method in _LEGACY_ONLY:
                # Gone from revision 2026-07-28 (subscriptions/listen replaces subscribe).
                reply = error_frame(id_json, METHOD_NOT_FOUND,
                                     "method not found in %s: %s" % (MODERN_VERSION, method))
            elif method == "ping":
                reply = result_frame(id_json, EMPTY_RESULT)
            elif method == "initialize":
                reply = await self._initialize(session, id_json, params)
            elif method == "resources/subscribe":
                reply = self._subscribe(session, id_json, params.get("uri"))
            elif method == "resources/unsubscribe":
                uri = params.get("uri")
                if uri in session.subscriptions:
                    session.subscriptions.remove(uri)
                reply = result_frame(id_json, EMPTY_RESULT)
            elif method == "logging/setLevel":
                level = params.get("level")
                if level not in LOG_LEVELS:
                    raise InvalidParams("unknown log level %s" % (level,))
                session.min_log_level = LOG_LEVELS.index(level)
                reply = result_frame(id_json, EMPTY_RESULT)
            else:
                # Answered at once: a client probing for a method must not wait.
                reply = error_frame(id_json, METHOD_NOT_FOUND, "method not found: " + method)
        except InvalidParams as e:
            reply = error_frame(id_json, INVALID_PARAMS, str(e))
        except Exception as e:
            _log.error("%s failed: %s", method, describe(e))
            reply = error_frame(id_json, INTERNAL_ERROR, "internal error: " + describe(e))
        if reply is not None:
            await self._send(session, reply)

    async def _initialize(self, session, id_json, params):
        requested = params.get("protocolVersion", _DEFAULT_VERSION)
        if not isinstance(requested, str):
            raise InvalidParams("protocolVersion must be a string")
        version = requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION
        capabilities = params.get("capabilities")
        vision = capabilities.get("vision") if isinstance(capabilities, dict) else None
        if isinstance(vision, dict) and isinstance(vision.get("url"), str):
            await self._offer_vision(vision["url"], vision.get("token"))
        session.protocol = version
        session.modern = False
        session.subscriptions = []  # a new session: the old one's subscriptions are gone
        capabilities = {"tools": {"listChanged": True}, "logging": {}}
        if self._resources or self._templates or self._later:
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        max_message = session.max_message or self.max_message
        if max_message:
            capabilities["experimental"] = {"messageLimit": {"maxBytes": max_message}}
        result = {
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": {"name": self.name, "version": self.version},
        }
        return result_frame(id_json, (dumps(result),))

    def _discover(self, id_json):
        """server/discover (revision 2026-07-28): versions, capabilities, identity.

        `listChanged` and `subscribe` are absent: on that revision they promise
        subscriptions/listen, which this server does not offer (its legacy clients
        get both through initialize). Logging is request-scoped there."""
        capabilities = {"tools": {}, "logging": {}}
        if self._resources or self._templates or self._later:
            capabilities["resources"] = {}
        result = {
            "resultType": "complete",
            "supportedVersions": ALL_VERSIONS,
            "capabilities": capabilities,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": self.name, "version": self.version}},
            "ttlMs": 0,
            "cacheScope": "private",
        }
        return result_frame(id_json, (dumps(result),))

    async def _offer_vision(self, url, token):
        if self._vision is None:
            return
        try:
            done = self._vision(url, token if isinstance(token, str) else "")
            if iscoroutine(done):
                await done
        except Exception as e:
            _log.error("vision callback failed: %s", describe(e))

    # -- paged lists (tools, resources, resource templates) ---------------------

    def _page(self, session, id_json, params, items, key, opening, modern, offered=None):
        """The pieces of one page: as many entries as fit in `page_limit`, envelope
        included. `key` names the attribute that identifies an entry: a page that has
        more after it gives the next entry's key as its nextCursor. `offered`: the
        session's choice of tools (see Session), or None."""
        cursor = params.get("cursor")
        with_user_tools = params.get("withUserTools") is True
        start = 0
        if cursor is not None and cursor != "":
            start = find(items, key, cursor) if isinstance(cursor, str) else -1
            if start < 0:
                raise InvalidParams("invalid cursor %s" % dumps(cursor))
        page_end = _PAGE_END_MODERN if modern else _PAGE_END
        more_end = _MORE_END_MODERN if modern else _MORE_END
        # A string id may hold non-ASCII characters, which MicroPython's json leaves unescaped.
        budget = ((session.page_limit or self.page_limit) - session.overhead - len(FRAME_OPEN)
                  - len(opening) - len(id_json.encode()))
        pieces = [FRAME_OPEN, id_json, opening]
        used = 0  # bytes of the entries and their commas
        tools = items is self._tools
        structured = tools and _structured(session, modern)
        index = _next_listed(items, start, with_user_tools, offered)
        while index >= 0:
            after = _next_listed(items, index + 1, with_user_tools, offered)
            entry = items[index].entry_bytes(structured) if tools else items[index].json_bytes
            size = used + (1 if used else 0) + entry
            if after < 0:
                tail = len(page_end)
            else:
                tail = len(_MORE_HEAD) + len(getattr(items[after], key)) + len(more_end)
            if size + tail > budget:
                break
            if used:
                pieces.append(",")
            if tools:
                pieces.append(items[index].json(session.portable, structured))
            else:
                pieces.append(items[index].json())
            used = size
            index = after
        if index < 0:
            pieces.append(page_end)
        elif used == 0:
            item = items[index]
            return error_frame(id_json, INTERNAL_ERROR,
                               "%s (%d bytes) does not fit in a page of %d bytes"
                               % (getattr(item, key), item.json_bytes, session.page_limit or self.page_limit))
        else:
            pieces.append(_MORE_HEAD)
            pieces.append(getattr(items[index], key))
            pieces.append(more_end)
        return pieces

    def _index(self, name):
        """The tool called `name`, or whose portable form it is (add_tool keeps those
        unique), or -1."""
        index = find(self._tools, "name", name)
        if index < 0:
            for i in range(len(self._tools)):
                if same(self._tools[i].name, name):
                    return i
        return index

    def _tools_changed(self):
        if self._list_changed_pending or not self._initialized():
            return
        # One notification for a burst of changes: the task runs after them.
        self._list_changed_pending = True
        asyncio.create_task(self._announce_list_changed())

    async def _announce_list_changed(self):
        self._list_changed_pending = False
        await self._to_initialized('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')

    # -- tools/call ---------------------------------------------------------

    def _call_tool(self, session, request_id, id_json, params, modern=False, log_level=None):
        """Queue the call (its task answers it); the frame of an argument error from 2025-11-25."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs the tool name")
        index = self._index(name)
        if index < 0 or session.offered is not None and not session.offered(self._tools[index]):
            raise InvalidParams("unknown tool " + name)  # one this client is not offered, too
        tool = self._tools[index]
        try:
            args = tool.properties.validate(params.get("arguments"))
        except InvalidParams as e:
            if not modern and (session.protocol is None or session.protocol < _ARGS_AS_RESULTS_FROM):
                raise
            return result_frame(id_json, error_result_pieces(str(e), modern))
        queued = 0
        for call in self._queue:
            if call.session is session:
                queued += 1
        if queued >= MAX_QUEUED_CALLS:
            if not session.refusing:  # once per burst: a flood must not flood the log too
                session.refusing = True
                _log.warning("more than %d tool calls queued by a client: refused", MAX_QUEUED_CALLS)
            return error_frame(id_json, BUSY, "busy: %d calls of yours wait" % MAX_QUEUED_CALLS)
        session.refusing = False
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        self._queue.append(_Call(session, request_id, id_json, tool, args,
                                 token if valid_id(token) else None, modern, log_level))
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
            ok = True
            try:
                value = call.tool.callback(call.args)
                if iscoroutine(value):
                    value = await value
                pieces = result_pieces(value, call.modern, call.tool.output_schema is not None
                                       and _structured(call.session, call.modern))
            except Exception as e:  # CancelledError is no Exception: it goes to the outer try
                _log.warning("tool %s failed: %s", call.tool.name, describe(e))
                pieces = error_result_pieces(describe(e), call.modern)
                ok = False
            if self.on_call is not None:
                self.on_call(call.tool.name, ok)
            if not call.cancelled:  # a tool may have swallowed its cancellation
                call.answering = True
                await self._send(call.session, result_frame(call.id_json, pieces))
        except asyncio.CancelledError:
            pass  # cancelled by the client: it expects no response
        finally:
            self._start_next()

    def cancel_calls(self, session=None):
        """Cancel every tool call of `session` (None: the default session) still owed a
        response, queued or running, as a client's notifications/cancelled would: for a
        transport whose session ended, so that no response can reach the client that
        asked. Returns how many were cancelled (a response already being sent is not
        counted: it is no longer owed)."""
        if session is None:
            session = self.default
        queue = self._queue
        count = 0
        for index in range(len(queue) - 1, -1, -1):
            if queue[index].session is session:
                del queue[index]
                count += 1
        call = self._running
        if call is not None and call.session is session and not call.answering and not call.cancelled:
            call.cancelled = True
            if call.started:
                call.task.cancel()
            count += 1
        return count

    def _cancel(self, session, request_id):
        if not valid_id(request_id):
            return
        call = self._running
        if call is not None and call.session is session and _same_id(call.id, request_id):
            if not call.answering:  # too late once the response is on its way
                call.cancelled = True
                if call.started:
                    call.task.cancel()
            return
        for index, call in enumerate(self._queue):
            if call.session is session and _same_id(call.id, request_id):
                del self._queue[index]
                return


# Methods revision 2026-07-28 removed: a request in its form gets -32601 for them.
_LEGACY_ONLY = ("ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")


def _structured(session, modern):
    """Whether the client's revision has output schemas and structuredContent."""
    return modern or (session.protocol or "") >= _STRUCTURED_FROM


def _next_listed(items, start, with_user_tools, offered=None):
    for index in range(start, len(items)):
        item = items[index]
        if offered is not None:
            if offered(item):
                return index
        elif with_user_tools or not item.user_only:
            return index
    return -1


def _params(message):
    """A message's params; none, or null, are no params. JSON-RPC wants params left out
    rather than null, but xiaozhi-esp32-server's manager console (Jackson) sends
    `"params":null` with its tools/list, and refusing it would list no tools there."""
    params = message.get("params")
    return _NO_PARAMS if params is None else params


def _unsupported_version_frame(id_json, requested):
    """Revision 2026-07-28's UnsupportedProtocolVersionError."""
    if not isinstance(requested, str):
        requested = dumps(requested)
    data = dumps({"supported": ALL_VERSIONS, "requested": requested})
    return error_frame(id_json, UNSUPPORTED_VERSION, "Unsupported protocol version", data)


def _invalid_request(message):
    """Why `message` is not a valid JSON-RPC 2.0 request or notification, or None."""
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and not valid_id(message["id"]):
        return "id must be a string or an integer"
    if not isinstance(message.get("method"), str):
        return "method must be a string"
    if not isinstance(_params(message), dict):
        return "params must be an object"
    return None

