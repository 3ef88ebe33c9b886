"""umcp: a Model Context Protocol server for MicroPython devices.

Its modules: `schema` (properties and argument checks; `propcheck`, a new property's
checks, dropped after the start), `tool` (tools and their
results), `resource` (resources and templates, their registration and the resources/*
requests, loaded at the first one), `modern` (revision 2026-07-28's server/discover and
version error, loaded at the first such request), `handshake` (the
initialize answer, loaded for each initialize and dropped after), `paging` (one page of
a list, loaded for each page and dropped after), `server` (the server: methods, paging,
both protocol eras), `rpc` (JSON-RPC frames, codes, lookups), `toolcheck` (a new tool's
checks, dropped after the start), `jsonin` (bounded JSON
input), `names` (tool names every client accepts), `compat` (the CPython/MicroPython
shims and logging).

Its names load their module at first use (`from umcp import McpServer` works as
ever): code that needs only `umcp.compat`, such as the network clients, does not
pay the heap for the server it never runs. The names: BOOLEAN, INTEGER, NUMBER,
STRING, InvalidParams, Property, PropertyList (umcp.schema); ImageContent, McpTool
(umcp.tool); McpServer, Session, SUPPORTED_VERSIONS, LATEST_VERSION,
MODERN_VERSION, LOG_LEVELS (umcp.server); McpResource, McpResourceTemplate
(umcp.resource); ALL_VERSIONS (umcp.modern).

`__version__` is umcp's release (CHANGES.md); the firmware reports it as its own.
"""

__version__ = "0.3.0"


def __getattr__(name):
    # A loop rather than a table of names: a dict of them would cost more heap.
    for module in ("schema", "tool", "server", "resource", "modern"):
        module = __import__("umcp." + module, None, None, ("_",))
        if hasattr(module, name) and name[0] != "_":
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(name)
