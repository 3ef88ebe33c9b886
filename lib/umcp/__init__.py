"""umcp: a Model Context Protocol server for MicroPython devices.

What a connected device runs all the time: `server` (the server: a message in, tools/call,
ping, cancellation, the answer out), `result` (a call's result as pieces), `args` (a
call's arguments checked), `rpc` (JSON-RPC frames, codes, lookups), `jsonin` (bounded
JSON input), `compat` (the CPython/MicroPython shims, logging, and loading code for a
call: call_then_forget, OnDemand) and, where the board has a tool catalogue written on
the host, `catalogue` (its records and parameter tables). Tools made at run time (a
maker's, or all of a board's without a catalogue) load `tool` (McpTool, ModuleText) and
`schema` (Property, PropertyList), kept while they exist. Everything else is loaded when
a request needs it and dropped after: `jsonfix` (an incoming message's \\u escapes
and deep nesting checked), `handshake` (the initialize answer), `paging` (one
page of a list) with `listing` (a tool's entry: its JSON Schema, annotations and size)
and `names` (tool names every client accepts), `resource` (resources and templates,
their registration and the resources/* requests; kept once loaded), `modern` (revision
2026-07-28's server/discover, version error and log level), `notices` (notifications,
log lines, progress, list changes; kept once loaded), `refusal` (answers to what could
not be read) with `jsonpeek` (one member of unreadable text), `image` (base64 pieces of
an image or a blob), `chunks` (a result's text in small pieces where the heap has no
block as long as it), and, while tools are made only, `toolcheck` and `propcheck` (a new
tool's and property's checks).

Its names load their module at first use (`from umcp import McpServer` works as ever,
and loads the server first: a device has it), so code that needs only `umcp.compat`,
such as the network clients, does not pay the heap for the server it never runs. The
names: BOOLEAN, INTEGER, NUMBER, STRING, InvalidParams (umcp.args); Property,
PropertyList (umcp.schema); ImageContent (umcp.result); McpTool (umcp.tool); McpServer,
Session, SUPPORTED_VERSIONS, LATEST_VERSION, MODERN_VERSION, LOG_LEVELS (umcp.server);
McpResource, McpResourceTemplate (umcp.resource); ALL_VERSIONS (umcp.modern).

`__version__` is umcp's release (CHANGES.md); the firmware reports it as its own.
"""

__version__ = "0.3.0"


def __getattr__(name):
    # A loop rather than a table of names: a dict of them would cost more heap.
    # The server first: a device has it loaded already, and looking there loads no module
    # a device with a tool catalogue does without (schema, tool).
    for module in ("server", "args", "result", "schema", "tool", "resource", "modern"):
        module = __import__("umcp." + module, None, None, ("_",))
        if hasattr(module, name) and name[0] != "_":
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(name)
