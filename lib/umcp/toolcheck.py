"""The checks a tool passes as it is made (McpTool) and registered (McpServer.add_tool):
its name, its output schema, a name no other tool has.
Loaded while tools are made, at the board's start, and dropped after it (umcpfw.app):
a session makes no tools, and their checks need no heap meanwhile."""

from .compat import const, dumps
from .jsonin import loads
from .names import MAX_PORTABLE, same

_NAME_CHARS = const("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


def check_name(name):
    """Tool names: 1 to 64 characters of A-Z a-z 0-9 _ - . (MCP allows 128, but the
    portable form clients need, umcp.names, allows 64, and is as long as the name)."""
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_PORTABLE:
        raise ValueError("tool name must be 1 to %d characters: %r" % (MAX_PORTABLE, name))
    for char in name:
        if char not in _NAME_CHARS:
            raise ValueError("tool name %r has a character outside A-Z a-z 0-9 _ - ." % (name,))


def output_schema_text(name, schema):
    """The output schema `schema` (a dict, or its JSON text) of the tool `name` as JSON
    text, checked: a JSON object whose type is "object"."""
    text = schema if isinstance(schema, str) else dumps(schema)
    try:
        parsed = loads(text)
    except ValueError as e:
        raise ValueError("tool %s: output_schema is not JSON: %s" % (name, e))
    if not isinstance(parsed, dict) or parsed.get("type") != "object":
        raise ValueError('tool %s: output_schema must be an object\'s schema ("type": "object")' % name)
    return text


def check_unique(server, name):
    """ValueError when one of `server`'s tools (its objects', its catalogue's) is called
    `name`, or by its portable form."""
    for known in _names(server):
        # Two names with one portable form (self.a_b, self_a.b) could not be told
        # apart by a client that needs it: refused like a duplicate.
        if same(known, name):
            raise ValueError("a tool named %s is already registered%s" % (
                known, "" if known == name else " (the same as %s for clients "
                "that need names without dots)" % name))


def _names(server):
    for tool in server.tools:
        yield tool.name
    catalogue = server.catalogue
    if catalogue is not None:
        with open(catalogue.path, "rb") as f:
            for index in range(catalogue.count):
                name = catalogue.record(index, f)[0]
                if name not in catalogue.removed:
                    yield name
