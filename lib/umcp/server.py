"""McpServer and Session: the MCP methods a device serves over JSON-RPC 2.0, whatever
the transport.

A transport makes a Session for each client (`server.session(send)`) and feeds its
`receive()` one message at a time; `send` carries the replies and notifications out as
pieces, never joined. Each client keeps its own revision (initialize: 2024-11-05 ..
2025-11-25; or 2026-07-28 per request, in `params._meta`), log level, subscriptions and
request ids. Tool calls run one at a time in arrival order, each on its own task.

What a connected device runs all the time; each rarer path is a module loaded when needed
(`handshake`, `paging`, `requests`, `resource`, `modern`, `notices`, `refusal`; the
registration methods: `registry`, McpServer.__getattr__), which reaches the server only
through public names: `tools`, `catalogue`, `resources`, `templates`, `later`, `sessions`,
`hidden`, `vision`, `announcing`, `queue`, `running`, `send()`, `current_call()`,
`initialized()`, `page()`, `stop_call()`, `answer_out_of_memory()`.
"""

import asyncio
import gc

from . import __version__
from .args import InvalidParams
from .compat import await_then_forget, call_then_forget, const, dumps, forget_modules, get_logger, iscoroutine
from .jsonin import loads
from .rpc import (EMPTY_RESULT, FRAME_OPEN, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
                  LOG_LEVELS, describe, error_frame, find, result_frame, valid_id)
from .result import error_result_pieces, result_pieces, structured

# The versions an initialize handshake negotiates (the legacy era).
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]
# Revision 2026-07-28: no handshake; every request carries its version in _meta.
MODERN_VERSION = "2026-07-28"
_META_VERSION = const("io.modelcontextprotocol/protocolVersion")
_META_LOG_LEVEL = const("io.modelcontextprotocol/logLevel")
# The version the xiaozhi protocol documents, for clients whose initialize omits it.
_DEFAULT_VERSION = const("2024-11-05")
# From 2025-11-25 on, argument validation errors are tool results, not protocol errors
# (versions are ISO dates, so they compare as strings).
_ARGS_AS_RESULTS_FROM = const("2025-11-25")

# McpServer's methods that are umcp.registry's functions (McpServer.__getattr__).
_REGISTRY = const(("add_tool", "add_user_only_tool", "remove_tool", "set_hidden", "add_resource",
                   "add_resource_template", "remove_resource", "remove_resource_template", "find_resource",
                   "on_vision"))
# At most this many tool calls of one client wait behind the running one; more are refused
# at once (a flood must not fill the heap, nor hold up the other clients' calls for long).
MAX_QUEUED_CALLS = const(8)
# JSON-RPC's range for implementation-defined server errors: the client's calls are queued
# to the limit already.
BUSY = const(-32000)

# A tools/list result's opening (the host writes a catalogue's pages with it: umcp.catalogue).
TOOLS_OPEN = const(',"result":{"tools":[')

# Read only: the params of a message that carries none, without a new dict each time.
_NO_PARAMS = {}

# The end of the answer to a request the heap could not serve (after FRAME_OPEN and its
# id): constant, so that sending it allocates next to nothing.
_OUT_OF_MEMORY = const(',"error":{"code":-32603,"message":"out of memory"}}')
_REPLACED = const("\ufffd")  # what umcp.jsonin puts in place of a lone surrogate

_log = get_logger("umcp")


class Session:
    """One client of the server: where its messages go and what it negotiated. Made by
    `McpServer.session()`; the transport calls `receive()` for each message the client
    sent and `close()` when the client is gone.

    :param server: The McpServer.
    :param send: ``send(pieces)``, a plain or async function, carries one JSON-RPC
                 message to the client: a list or tuple of str and bytes-like pieces of
                 JSON text (``compat.join_pieces`` makes them one str).
    :param overhead: The bytes the transport's envelope adds to a message.
    :param page_limit: The largest list frame, envelope included (None: the server's).
    :param max_message: The largest message the transport accepts, announced in
                        initialize (None: the server's).
    :param offered: ``offered(tool) -> bool``: the tools this client sees and may call,
                    each listed whatever ``withUserTools`` says (None: every tool, the
                    user-only ones listed on ``withUserTools``).

    A transport whose clients need tool names of ``^[a-zA-Z0-9_-]{1,64}$`` sets
    ``portable`` (umcp.names): tools/list gives them so; tools/call takes either form.
    """

    # Class defaults: a session keeps only what differs (each attribute is heap for as
    # long as the client stays).
    portable = False  # tools/list names in the portable form
    refusing = False  # its calls are being refused as over MAX_QUEUED_CALLS
    protocol = None  # negotiated legacy version; None until initialize
    modern = False  # its latest request came in revision 2026-07-28's form
    min_log_level = 0
    subscriptions = ()  # URIs it subscribed to (legacy revisions; umcp.resource: at most 8)
    updated = ()  # subscribed URIs whose notification is on its way
    # Where `offered` picks out of a catalogue what one of its page forms lists: whether
    # that form lists the user-only tools (set by whoever made the session); None: not so.
    sees = None
    # Its transport's task waits for the answer to each request it hands over (an HTTP
    # request's): a tool call with none ahead of it runs in that task, not one of its own.
    waits = False

    def __init__(self, server, send=None, overhead=0, page_limit=None, max_message=None,
                 offered=None):
        self.server = server
        self.offered = offered
        self.send = send
        self.overhead = overhead
        self.page_limit = page_limit
        self.max_message = max_message

    def set_sender(self, send, overhead=0):
        """Change where this client's messages go.

        :param send: ``send(pieces)``, a plain or async function (see Session).
        :param overhead: The bytes the transport's envelope adds to a message.
        """
        self.send = send
        self.overhead = overhead

    async def receive(self, data):
        """Serve one message from this client: the whole message path (McpServer.receive).

        :param data: The message as the transport read it, JSON text (str or bytes-like).

        Never raises for what the client sent: every answer, an error included, goes out
        through the session's ``send``.
        """
        await self.server.receive(data, self)

    async def handle(self, payload, raw=None, inside=None):
        """Serve one message from this client (see McpServer.handle)."""
        await self.server.handle(payload, self, raw, inside)

    async def refuse(self, data, reason, inside=None):
        """-32700 to this client for a message nobody could read (see McpServer.refuse
        for its id)."""
        await self.server.refuse(data, reason, self, inside)

    async def parse_error(self, reason):
        """-32700 to this client for a message nobody could read."""
        await self.server.refuse(None, reason, self)

    def cancel_calls(self):
        """Cancel this client's tool calls still owed a response (McpServer.cancel_calls)."""
        return self.server.cancel_calls(self)

    def close(self):
        """Forget this client, once its transport knows it is gone: its calls are
        cancelled, and nothing more is sent to it.

        :returns: How many calls were cancelled.
        """
        count = self.cancel_calls()
        sessions = self.server.sessions
        if self in sessions:
            sessions.remove(self)
        return count


class _Call:
    """A tools/call request, queued or running."""

    last_progress = None
    task = None
    started = False
    cancelled = False
    answering = False
    # Its task is writing a message of its own (a log line, progress): a cancellation
    # then waits until the message is out (send), as a stream cut inside a message
    # would carry the next one as its rest.
    sending = False

    def __init__(self, session, request_id, id_json, tool, args, progress_token, modern, log_level):
        self.session = session
        self.id = request_id
        self.id_json = id_json
        self.tool = tool
        self.args = args
        self.progress_token = progress_token
        self.modern = modern  # came in revision 2026-07-28's form
        self.log_level = log_level  # its _meta logLevel (an index of LOG_LEVELS), or None


class McpServer:
    """An MCP server: the tools and resources a device offers, served to every client of
    every transport at once.

    :param name: The server's name, as initialize and server/discover report it.
    :param version: The server's version, likewise (umcp's own by default).
    :param page_limit: The largest tools/list (or other list) frame in bytes, the
                       transport's envelope included; a session may set a smaller one.

    The methods that register tools and resources are umcp.registry's, each bound to the
    server as it is looked up (__getattr__): ``add_tool()``, ``add_user_only_tool()``,
    ``remove_tool()``, ``set_hidden()``, ``add_resource()``, ``add_resource_template()``,
    ``remove_resource()``, ``remove_resource_template()``, ``find_resource()``,
    ``on_vision()``.
    """

    def __init__(self, name="umcp", version=__version__, page_limit=8000):
        self.name = name
        self.version = version
        self.page_limit = page_limit  # bytes of a whole tools/list frame, envelope included
        self.tools = []  # listing order: common tools first keeps the LLM's prompt cache warm
        # The tools written on the host (umcp.catalogue), listed before `tools`, or None.
        self.catalogue = None
        self.resources = []
        self.templates = []
        self.later = []  # add_resources_later's registrations, run at the first resources/*
        self.vision = None
        self.announcing = []  # list-change notifications on their way (umcp.notices)
        # The clients; the first is the default session, which handle() and set_sender()
        # without a session use (a server with one transport needs no other).
        self.default = Session(self)
        self.sessions = [self.default]
        self.queue = []  # the tool calls waiting, in arrival order
        self.running = None  # the tool call running, or None
        self.out_of_memory = 0  # messages the heap could not serve (each answered in short)
        self.notices_lost = 0  # notifications dropped for want of heap
        # The largest message a transport accepts (bytes), announced in initialize as
        # capabilities.experimental.messageLimit.maxBytes; None: not announced. A session
        # may say its own.
        self.max_message = None
        # Called as on_call(tool name, ok) after each tool's callback returned or raised
        # (a status screen shows the last call): it must return at once and never raise.
        self.on_call = None

    # hidden(name) -> bool: the tools no client sees or may call (set_hidden); None: none.
    hidden = None

    def session(self, send=None, overhead=0, page_limit=None, max_message=None, offered=None):
        """Make a Session for a new client of a transport; it gets notifications until
        it is closed.

        :param send: ``send(pieces)`` carries one message to the client (see Session).
        :param overhead: The bytes the transport's envelope adds to each message.
        :param page_limit: This client's largest list frame (None: the server's).
        :param max_message: The largest message the transport accepts, announced in
                            initialize (None: the server's ``max_message``).
        :param offered: ``offered(tool) -> bool``: the tools this client sees and may
                        call (None: all of them).
        :returns: The new Session.
        """
        session = Session(self, send, overhead, page_limit, max_message, offered)
        self.sessions.append(session)
        return session

    # -- registration -------------------------------------------------------

    def __getattr__(self, name):
        """The methods that register and remove tools and resources, hide tools, take
        the vision callback and find a resource: umcp.registry's functions, loaded at the
        first one asked for (a connected device seldom calls them) and bound to this
        server as it is looked up (`server.add_tool(...)` is `add_tool(server, ...)`).

        :raises AttributeError: For a name that is none of them.
        """
        if name in _REGISTRY:  # (any other name: no import, as for a plain object)
            function = getattr(__import__("umcp.registry", None, None, ("_",)), name)
            return lambda *args, **kwargs: function(self, *args, **kwargs)
        raise AttributeError(name)

    def add_resources_later(self, register):
        """Register resources only when a client first sends a resources/* request:
        until then neither they nor umcp.resource's code take heap (a session may never
        ask). Initialize announces the resources capability meanwhile, and the late
        registration announces no list change.

        :param register: ``register(server)`` calls ``add_resource()`` and
                         ``add_resource_template()``.
        """
        self.later.append(register)

    def resource_updated(self, uri):
        """Tell the clients that subscribed to a resource that it changed. Call it from
        a task (the notification needs the loop); it costs nothing when nobody
        subscribed.

        :param uri: The resource's URI.
        :returns: Whether a client will be told.
        """
        told = False
        for session in self.sessions:
            if uri in session.subscriptions:
                from .resource import updated

                told = True
                updated(self, session, uri)
        return told

    def has_resources(self):
        """Whether the server offers resources (initialize and discover announce them)."""
        return bool(self.resources or self.templates or self.later)

    def initialized(self):
        """Whether a client initialized (only they hear of list changes)."""
        for session in self.sessions:
            if session.protocol is not None:
                return True
        return False

    def set_sender(self, send, overhead=0):
        """The default session's `send(pieces)` and envelope `overhead` (see Session)."""
        self.default.set_sender(send, overhead)

    # -- outgoing: notifications (umcp.notices, loaded by the first) -------------

    async def notify(self, method, params=None, session=None):
        """A notification to `session`, or to every client. One that finds no heap (to be
        built or sent) is dropped and counted (`notices_lost`), never raised."""
        notices = self._notices(method)
        if notices is not None:
            await notices.notify(self, method, params, session)

    async def log(self, level, data, logger=None):
        """Send a log line (notifications/message): to the client of the running call
        when that call's task logs it, else to every client; each client only at or
        above the level it set.

        :param level: One of LOG_LEVELS ("debug" ... "emergency").
        :param data: What to log: a str or anything JSON can hold.
        :param logger: The logger's name (optional).
        :raises ValueError: For an unknown level.
        """
        notices = self._notices("notifications/message")
        if notices is not None:
            await notices.log(self, level, data, logger)

    async def progress(self, progress, total=None, message=None):
        """Report the progress of the running call, from its task. Only a call whose
        request carried ``_meta.progressToken`` gets progress.

        :param progress: How far it got; it must grow each time, else nothing is sent.
        :param total: The value ``progress`` reaches at the end (optional).
        :param message: A short text for the user (optional).
        :returns: True when a notification went out.
        """
        notices = self._notices("notifications/progress")
        return notices is not None and await notices.progress(self, progress, total, message)

    def _notices(self, method):
        """umcp.notices (loaded by the first notification, then kept), or None when the heap
        has no room to load it: the notification `method` is then lost and counted."""
        try:
            notices = __import__("umcp.notices", None, None, ("log",))  # (umcp's __getattr__
            # would answer `from . import notices` on MicroPython, and knows no modules)
        except MemoryError:
            gc.collect()
            self.notices_lost += 1
            _log.warning("out of memory: a %s was dropped", method)
            return None
        return notices

    def progress_requested(self):
        """Whether the running call carried `_meta.progressToken`: its client follows
        progress, so a long tool may keep it waiting (False outside a call)."""
        call = self.current_call()
        return call is not None and call.progress_token is not None

    def current_call(self):
        """The running call when the code asking runs on that call's task, else None: a
        task of its own (a background upgrade, a sensor's upkeep) speaks outside any call,
        even while some other client's call runs."""
        call = self.running
        if call is None:
            return None
        try:
            current = asyncio.current_task()
        except RuntimeError:  # not inside a task
            return None
        return call if call.task is current else None

    async def send(self, session, pieces):
        """Hand one message to the session's transport. A MemoryError is raised (the
        transport sent nothing: the caller may answer in short, answer_out_of_memory);
        anything else is logged: a broken link must not stop the server."""
        if session.send is None:
            _log.warning("no sender installed: dropped a message")
            return
        call = self.current_call()
        if call is not None:
            call.sending = True
        try:
            sent = session.send(pieces)
            if iscoroutine(sent):
                await sent
        except MemoryError:
            raise
        except Exception as e:
            _log.error("send failed: %s", describe(e))
        finally:
            if call is not None:
                call.sending = False
        if call is not None and call.cancelled and not call.answering:
            raise asyncio.CancelledError  # the cancellation stop_call() put off until now

    async def answer_out_of_memory(self, session, id_json):
        """The heap could not serve a message (reading, deciding, building or sending its
        answer): collect, log once, and answer the request `id_json` (None: a notification,
        owed nothing) with -32603 in a frame of a few constant pieces. The link, the other
        messages and the heap carry on."""
        gc.collect()
        self.out_of_memory += 1
        _log.warning("out of memory: request %s answered -32603", id_json)
        if id_json is None:
            return
        try:
            await self.send(session, (FRAME_OPEN, id_json, _OUT_OF_MEMORY))
        except MemoryError:
            gc.collect()
            _log.warning("out of memory: no answer could go out to %s", id_json)

    # -- incoming -----------------------------------------------------------

    async def parse_error(self, reason, session=None):
        """Answer a message that could not be parsed: -32700 with a null id (no id
        could be read), `reason` saying why (umcp.jsonin's words)."""
        await self.refuse(None, reason, session)

    async def receive(self, data, session=None):
        """Serve one message as the transport read it, JSON text (str or bytes-like), from
        `session` (None: the default session): the whole message path a transport needs.
        Text that cannot be read is answered -32700 (refuse): with a null id if it is not
        JSON, with the request's id if it was refused for depth or memory;
        a MemoryError anywhere costs that message only (-32603 to a request). Never raises
        and never waits for a tool callback."""
        if session is None:
            session = self.default
        try:
            message = loads(data)
        except ValueError as e:
            await self.refuse(data, str(e), session)
            return
        await self._serve(message, session, data, None)

    async def refuse(self, data, reason, session=None, inside=None):
        """Answer a message nobody could read (`reason`: why, in umcp.jsonin's words) with
        -32700. Its id is null when `reason` says the text is not JSON; else the request's
        id where `data` (its text, or as much of it as arrived; str or bytes-like) shows
        one beside a method at its top level, else null too. `inside`:
        the key (bytes) of the envelope member that holds the message (umcp.refusal)."""
        if session is None:
            session = self.default
        try:
            await await_then_forget("umcp.refusal", "refuse", self, session, data, reason, inside)
        except MemoryError:  # not even the refusal's code fits: answer in short
            data = None
            await self.answer_out_of_memory(session, "null")

    def handle(self, payload, session=None, raw=None, inside=None):
        """Serve one incoming JSON-RPC message (dict, or JSON text or bytes, which
        receive() reads) from `session` (None: the default session). `raw`: the text the
        message was read from, and `inside` the key (bytes) of the envelope member that
        held it: a string id whose decoding replaced a lone surrogate is then answered as
        the client wrote it (umcp.refusal.echo_id).

        Returns the awaitable that serves it (a plain function: no coroutine frame of its
        own for each message). Never raises and never waits for a tool callback; a
        MemoryError costs this message only (answer_out_of_memory).
        """
        if session is None:
            session = self.default
        if isinstance(payload, dict):  # (the common case first: no tuple made to ask)
            return self._serve(payload, session, raw, inside)
        if isinstance(payload, (str, bytes, bytearray, memoryview)):
            return self.receive(payload, session)
        return self._serve(payload, session, raw, inside)

    async def _serve(self, payload, session, raw, inside):
        """handle() for a message already parsed (any JSON value)."""
        id_json = None  # a notification is owed nothing
        try:
            if not isinstance(payload, dict):
                await self.send(session, error_frame("null", INVALID_REQUEST, "a message must be one JSON object"))
                return
            if "method" not in payload and ("result" in payload or "error" in payload):
                # We send no requests, so a response is the client's confusion.
                _log.info("ignored a response from the client (id %s)", payload.get("id"))
                return
            request_id = payload.get("id")
            if "id" in payload:
                id_json = "null"
                if valid_id(request_id):
                    id_json = dumps(request_id)
                    if raw is not None and isinstance(request_id, str) and _REPLACED in request_id:
                        id_json = call_then_forget("umcp.refusal", "echo_id", request_id, id_json,
                                                   raw, inside)
            raw = None
            problem = _invalid_request(payload)
            if problem is not None:
                await self.send(session, error_frame(id_json or "null", INVALID_REQUEST, problem))
            elif "id" not in payload:
                method = payload["method"]
                if method != "notifications/initialized":  # (every client's: nothing to do)
                    call_then_forget("umcp.requests", "notification", self, session, method,
                                     _params(payload))
            else:
                await self._request(session, request_id, id_json, payload["method"],
                                    _params(payload))
        except MemoryError:
            payload = raw = None
            await self.answer_out_of_memory(session, id_json)
        except Exception as e:  # a bug of ours must not stop the device
            _log.error("dropped a message: %s", describe(e))

    async def _request(self, session, request_id, id_json, method, params):
        # Each method gives the frame of its reply (None: a tool call answers later).
        try:
            # The era of this request: revision 2026-07-28 names itself in _meta.
            meta = params.get("_meta")
            requested = meta.get(_META_VERSION) if isinstance(meta, dict) else None
            modern = requested == MODERN_VERSION
            log_level = None
            if requested is not None:
                if not modern and requested not in SUPPORTED_VERSIONS:
                    from .modern import unsupported_version_frame

                    await self.send(session, unsupported_version_frame(id_json, requested))
                    return
                if modern:
                    session.modern = True
                    if _META_LOG_LEVEL in meta:  # (an import allocates: only then)
                        from .modern import request_log_level

                        log_level = request_log_level(meta)
            if method == "tools/call":
                reply = self._call_tool(session, request_id, id_json, params, modern, log_level)
                if isinstance(reply, _Call):  # to run here (Session.waits)
                    reply.task = asyncio.current_task()
                    await self._run(reply, None, True)
                    return
            elif method == "tools/list":
                reply = self.page(session, id_json, params, self.tools, "name", TOOLS_OPEN, modern,
                                  session.offered)
            elif method == "ping" and not modern:
                reply = result_frame(id_json, EMPTY_RESULT)
            elif method == "initialize" and not modern:
                # Once a session: its code leaves the heap again after.
                reply = await await_then_forget("umcp.handshake", "initialize_frame", self, session,
                                                id_json, params, SUPPORTED_VERSIONS, _DEFAULT_VERSION)
            else:
                # The rest a device seldom gets: resources, discovery, a log level, an
                # unknown method (answered at once: a client probing must not wait).
                reply = await await_then_forget("umcp.requests", "answer", self, session, id_json,
                                                method, params, modern)
        except InvalidParams as e:
            reply = error_frame(id_json, INVALID_PARAMS, str(e))
        except MemoryError:
            raise  # handle() answers in short
        except Exception as e:
            _log.error("%s failed: %s", method, describe(e))
            reply = error_frame(id_json, INTERNAL_ERROR, "internal error: " + describe(e))
        if reply is not None:
            await self.send(session, reply)

    # -- paged lists (tools, resources, resource templates) ---------------------

    def page(self, session, id_json, params, items, key, opening, modern, offered=None):
        """The pieces of one page of `items` (umcp.paging.page; `key` names the attribute
        that identifies an entry, `opening` the result's opening, `offered` the session's
        choice of tools or None). Its code, and the listing's (umcp.listing), leave the
        heap once the page is sent: a client lists a few pages a session. A catalogue's page
        as a backend asks for it comes from its file with none of that code (Catalogue.page)."""
        page_limit = session.page_limit or self.page_limit
        # What the frame leaves the result: a string id may hold non-ASCII characters, which
        # MicroPython's json leaves unescaped.
        room = page_limit - session.overhead - len(FRAME_OPEN) - len(id_json.encode())
        tools = items is self.tools
        catalogue = self.catalogue
        # A catalogue alone (no tool made at run time, none removed), as a backend asks, or
        # a choice of tools that one of its page forms lists (Session.sees).
        if (tools and catalogue is not None and self.hidden is None
                and not (modern or session.portable or self.tools or catalogue.removed)):
            sees = params.get("withUserTools") is True if offered is None else session.sees
            if sees is not None:
                pieces = catalogue.page(session, id_json, params, room, sees)
                if pieces is not None:
                    return pieces
        try:
            return call_then_forget("umcp.paging", "page", session, id_json, params, items, key,
                                    opening, modern, offered, tools, page_limit, room,
                                    catalogue if tools else None)
        finally:
            forget_modules("umcp.listing", "umcp.names")

    # -- tools/call ---------------------------------------------------------

    def _call_tool(self, session, request_id, id_json, params, modern=False, log_level=None):
        """Queue the call (its task answers it); the frame of an argument error from 2025-11-25."""
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs the tool name")
        # The exact name first, then its portable form (umcp.names, loaded only then).
        index = find(self.tools, "name", name)
        tool = self.tools[index] if index >= 0 else None
        if tool is None and self.catalogue is not None:
            tool = self.catalogue.tool(name)
        if tool is None:
            from .names import index_of  # a client of portable names

            index = index_of(self.tools, name)
            tool = self.tools[index] if index >= 0 else None
        if (tool is None or session.offered is not None and not session.offered(tool)
                or self.hidden is not None and self.hidden(tool.name)):
            raise InvalidParams("unknown tool " + name)  # one this client is not offered, too
        try:
            args = tool.properties.validate(params.get("arguments"))
        except InvalidParams as e:
            if not modern and (session.protocol is None or session.protocol < _ARGS_AS_RESULTS_FROM):
                raise
            return result_frame(id_json, error_result_pieces(str(e), modern))
        queued = 0
        for call in self.queue:
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
        call = _Call(session, request_id, id_json, tool, args, token if valid_id(token) else None,
                     modern, log_level)
        if self.running is None and session.waits and not self.queue:
            self.running = call
            return call  # none ahead of it, and its transport's task waits: run there
        self.queue.append(call)
        if self.running is None:
            self._start_next()
        return None

    def _start_next(self):
        self.running = self.queue.pop(0) if self.queue else None
        if self.running is not None:
            self.running.task = asyncio.create_task(self._run(self.running))

    def _hand_over(self, call, value):
        """Go on with `call`, whose callback gave the coroutine `value`, in a task of its own.
        (Not inline in _run: on MicroPython that made every call's run keep about 8 KB more
        of the heap alive on board (d), measured and left unexplained.)"""
        call.started = False  # (see _run: flagged until its task begins)
        call.task = asyncio.create_task(self._run(call, value))

    async def _run(self, call, value=None, here=False):
        """Run the call `call` and send its answer, then start the next. `here`: in the
        task of the transport that asked (Session.waits), not in one of its own; a callback
        that returns a coroutine then goes on in a task of its own (`value`: that
        coroutine), so that the transport's task never waits on a tool's await (a client
        hanging up must be seen meanwhile)."""
        handed = False
        try:
            # A task cancelled before its first step never enters its body (so
            # never reaches `finally`): a not-yet-started call is only flagged.
            if call.cancelled:
                if value is not None:
                    value.close()  # handed over, and cancelled before its task began
                return
            call.started = True
            pieces = None  # none: the heap could not hold the answer
            ok = refused = False  # refused: pieces are an error frame
            try:
                try:
                    if value is None:
                        value = call.tool.callback(call.args)
                        if here and iscoroutine(value):
                            handed = True
                            self._hand_over(call, value)
                            return
                    if iscoroutine(value):
                        value = await value
                    pieces = result_pieces(value, call.modern, call.tool.output_schema is not None
                                           and structured(call.session, call.modern))
                    ok = True
                except MemoryError:
                    pass
                except InvalidParams as e:
                    # The callback's own check of its arguments (what a schema cannot say):
                    # answered as the schema's check is, -32602 or (2025-11-25 on) a result.
                    protocol = call.session.protocol
                    if call.modern or protocol is not None and protocol >= _ARGS_AS_RESULTS_FROM:
                        pieces = error_result_pieces(str(e), call.modern)
                    else:
                        pieces = error_frame(call.id_json, INVALID_PARAMS, str(e))
                        refused = True
                except Exception as e:  # CancelledError is no Exception: it goes to the outer try
                    _log.warning("tool %s failed: %s", call.tool.name, describe(e))
                    pieces = error_result_pieces(describe(e), call.modern)
                value = None
                if self.on_call is not None:
                    try:  # the watcher's fault must not reach the call's answer
                        self.on_call(call.tool.name, ok)
                    except Exception as e:
                        _log.warning("on_call for %s: %s", call.tool.name, describe(e))
                if not call.cancelled and pieces is not None:  # a tool may have swallowed its cancellation
                    call.answering = True
                    await self.send(call.session, pieces if refused else result_frame(call.id_json, pieces))
            except MemoryError:
                pieces = None
            if pieces is None and not call.cancelled:
                value = None
                call.answering = True
                await self.answer_out_of_memory(call.session, call.id_json)
        except asyncio.CancelledError:
            if here:  # the transport's task itself is cancelled (a call run here never is)
                raise
            # cancelled by the client: it expects no response
        finally:
            if not handed:
                self._start_next()

    def cancel_calls(self, session=None):
        """Cancel every tool call of `session` (None: the default session) still owed a
        response, queued or running, as a client's notifications/cancelled would: for a
        transport whose session ended, so that no response can reach the client that
        asked. Returns how many were cancelled (a response already being sent is not
        counted: it is no longer owed)."""
        if session is None:
            session = self.default
        queue = self.queue
        count = 0
        for index in range(len(queue) - 1, -1, -1):
            if queue[index].session is session:
                del queue[index]
                count += 1
        call = self.running
        if call is not None and call.session is session and not call.answering and not call.cancelled:
            self.stop_call(call)
            count += 1
        return count

    def stop_call(self, call):
        """Cancel a running call's task, or, while the task writes a message of its own,
        have send() raise the cancellation once the message is out."""
        call.cancelled = True
        if call.started and not call.sending:
            call.task.cancel()


def _params(message):
    """A message's params; none, or null, are no params. JSON-RPC wants params left out
    rather than null, but xiaozhi-esp32-server's manager console (Jackson) sends
    `"params":null` with its tools/list, and refusing it would list no tools there."""
    params = message.get("params")
    return _NO_PARAMS if params is None else params


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
