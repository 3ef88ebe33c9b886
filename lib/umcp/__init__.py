"""umcp: a Model Context Protocol server for MicroPython devices.

Resident on a connected device: `server`, `result`, `args`, `rpc`, `jsonin`, `compat`,
and `catalogue` where the board has a tool catalogue. Kept while tools are made at run
time: `registry`, `tool`, `schema`, `toolcheck`, `propcheck`. Loaded when a request needs
them: `jsonfix`, `handshake`, `paging`, `listing`, `names`, `requests`, `resource`,
`modern`, `notices`, `refusal`, `jsonpeek`, `image`, `chunks` (docs/DESIGN.md's map).

The names below load their module at first use, so code that needs only `umcp.compat`
(the network clients) does not pay for the server: BOOLEAN, INTEGER, NUMBER, STRING,
InvalidParams (umcp.args); Property, PropertyList (umcp.schema); ImageContent
(umcp.result); McpTool (umcp.tool); McpServer, Session, SUPPORTED_VERSIONS,
LATEST_VERSION, MODERN_VERSION, LOG_LEVELS (umcp.server); McpResource,
McpResourceTemplate (umcp.resource); ALL_VERSIONS (umcp.modern). `__version__` is umcp's
release (CHANGES.md), which the firmware reports as its own.
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
