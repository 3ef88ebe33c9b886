"""umcp: a Model Context Protocol server for MicroPython devices.

The names below load their module at first use (`from umcp import McpServer`
works as ever): code that needs only `umcp.compat`, such as the network
clients, does not pay the heap for the server it never runs.
"""

_WHERE = {
    "BOOLEAN": "schema", "INTEGER": "schema", "NUMBER": "schema", "STRING": "schema",
    "InvalidParams": "schema", "Property": "schema", "PropertyList": "schema",
    "ImageContent": "tool", "McpTool": "tool",
    "McpResource": "resource", "McpResourceTemplate": "resource",
    "ALL_VERSIONS": "server", "LATEST_VERSION": "server", "LOG_LEVELS": "server", "MODERN_VERSION": "server",
    "SUPPORTED_VERSIONS": "server", "McpServer": "server", "get_instance": "server",
}


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(name)
    value = getattr(__import__("umcp." + module, None, None, (name,)), name)
    globals()[name] = value
    return value
