"""How tools are listed: each tool's tools/list entry (its name, description,
inputSchema from its PropertyList, output schema, annotations) as JSON text, and its
size. Loaded while tools are made (McpTool keeps only its entry's size) and for each
tools/list page, and dropped after either (umcp.server.page, umcpfw.app): a connected
device never lists, so none of this is on its heap meanwhile. A page's entries
(Entry) keep this module's code alive until the transport has written them."""

from .compat import const, dumps

# An entry's outputSchema sits between its inputSchema and its annotations.
_OUTPUT_KEY = const(',"outputSchema":')
# MCP annotation keys, in the order of McpTool's hints.
_HINT_KEYS = const(("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"))


def _text(text):
    """A str as it is, a umcp.tool.ModuleText's text (the one with read())."""
    return text if isinstance(text, str) else text.read()


def property_schema(prop):
    """The JSON Schema fragment of a Property."""
    fragment = {"type": prop.type}
    if prop.description is not None:
        fragment["description"] = prop.description
    if not prop.required:
        fragment["default"] = prop.default
    if prop.minimum is not None:
        fragment["minimum"] = prop.minimum
    if prop.maximum is not None:
        fragment["maximum"] = prop.maximum
    if prop.enum is not None:
        fragment["enum"] = list(prop.enum)
    return fragment


def input_schema(properties):
    """A PropertyList's JSON Schema: a tool's inputSchema."""
    fields = {}
    required = []
    for prop in properties:
        fields[prop.name] = property_schema(prop)
        if prop.required:
            required.append(prop.name)
    schema = {"type": "object", "properties": fields}
    if required:
        schema["required"] = required
    return schema


def annotations(tool):
    """A tool's MCP annotations, as a dict (empty when the tool has none)."""
    found = {}
    if tool.user_only:
        # The xiaozhi convention: user-only tools are for the user's console, not the LLM.
        found["audience"] = ["user"]
    if tool.hints:
        for key, value in zip(_HINT_KEYS, tool.hints):
            if value is not None:
                found[key] = value
    return found


def entry_json(tool, portable_name=False, structured=True):
    """The tools/list entry's JSON text: `portable_name` gives the name in the form every
    client accepts (umcp.names, same length); `structured` says whether the client's
    revision has output schemas (2025-06-18 on)."""
    name = tool.name
    if portable_name:  # umcp.names only for the clients that need it (not xiaozhi's)
        from .names import portable

        name = portable(name)
    entry = {"name": name}
    description = tool.description
    if description is not None:
        if isinstance(description, tuple):
            description = description[0] % description[1]
        else:
            description = _text(description)
        entry["description"] = description
    entry["inputSchema"] = input_schema(tool.properties)
    found = annotations(tool)
    if found:
        entry["annotations"] = found
    text = dumps(entry)
    if structured and tool.output_schema is not None:
        # Spliced in as the text it is kept as (a JSON object's text ends in "}").
        text = text[:-1] + _OUTPUT_KEY + _text(tool.output_schema) + "}"
    return text


def entry_size(tool):
    """The UTF-8 bytes of a tool's entry with its output schema (MicroPython's json leaves
    non-ASCII unescaped): McpTool keeps it as json_bytes, for paging."""
    return len(entry_json(tool).encode())


def entry_bytes(tool, structured):
    """A tool's entry's size for a client with (or without) output schemas."""
    schema = tool.output_schema
    if structured or schema is None:
        return tool.json_bytes
    size = len(schema.encode()) if isinstance(schema, str) else schema.bytes
    return tool.json_bytes - len(_OUTPUT_KEY) - size


def schema_text(name, schema):
    """An output schema as JSON text, checked (umcp.toolcheck). A umcp.tool.ModuleText is
    checked and kept as it is, with its text's size in UTF-8 bytes (`bytes`: entry_bytes()
    needs it for every page)."""
    from .toolcheck import output_schema_text

    if hasattr(schema, "read"):
        schema.bytes = len(output_schema_text(name, schema.read()).encode())
        return schema
    return output_schema_text(name, schema)


class Entry:
    """A tool's tools/list entry as one client gets it (the portable name, the output
    schema or not), handed to the transport as a piece (json(), json_bytes:
    umcp.compat.piece_utf8): serialized only as it is written."""

    def __init__(self, tool, portable_name, structured):
        self.tool = tool
        self.portable_name = portable_name
        self.structured = structured
        self.json_bytes = entry_bytes(tool, structured)  # a portable name is as long

    def json(self):
        return entry_json(self.tool, self.portable_name, self.structured)
