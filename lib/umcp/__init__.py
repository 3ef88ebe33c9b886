"""umcp: a Model Context Protocol server for MicroPython devices.

The public names load on first use (a module __getattr__, which MicroPython has too):
a network client importing umcp.compat pays for no schema, tool or server code."""

# name -> the module of umcp that defines it
_WHERE = {
    "BOOLEAN": "schema", "INTEGER": "schema", "STRING": "schema", "InvalidParams": "schema",
    "Property": "schema", "PropertyList": "schema",
    "ImageContent": "tool", "McpTool": "tool",
    "LATEST_VERSION": "server", "LOG_LEVELS": "server", "SUPPORTED_VERSIONS": "server",
    "McpServer": "server", "get_instance": "server",
}


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError("module 'umcp' has no attribute '%s'" % name)
    value = getattr(__import__("umcp." + module, None, None, (name,), 0), name)
    globals()[name] = value  # once loaded, a plain module attribute
    return value
