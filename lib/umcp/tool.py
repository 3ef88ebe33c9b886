"""A tool: its description for tools/list and the shaping of its result for tools/call."""

from binascii import b2a_base64

from .compat import const, dumps, forget_modules
from .names import portable
from .schema import NO_PROPERTIES, PropertyList

# An entry's outputSchema sits between its inputSchema and its annotations.
_OUTPUT_KEY = const(',"outputSchema":')

# From 2025-06-18 on, tools have output schemas and results structuredContent.
_STRUCTURED_FROM = const("2025-06-18")

# MCP annotation keys, in the order of McpTool's hint arguments.
_HINT_KEYS = const(("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"))
_NO_HINTS = const((None, None, None, None, None))
_SHARED_HINTS = []  # one tuple for each set of hints in use: most tools share a handful


# Image bytes per base64 piece: 1024 characters, a multiple of 3 (so that only the last
# piece is padded and the pieces' base64 strung together is the image's).
_BASE64_CHUNK = const(768)


class Base64Piece:
    """A piece of an outgoing message holding the base64 of data[start:end], encoded only
    as a transport writes it (umcp.compat.piece_utf8): an image's base64 (4/3 of a camera
    frame) is never on the heap whole, nor in one block, only one piece's at a time."""

    def __init__(self, view, start, end):
        self.view = view  # a memoryview of the image, shared by its pieces: no copy
        self.start = start
        self.end = end
        self.json_bytes = (end - start + 2) // 3 * 4

    def json(self):
        return b2a_base64(self.view[self.start : self.end], newline=False)


def base64_pieces(data):
    """The base64 of `data` (bytes-like) as Base64Piece pieces of at most 1024 characters."""
    view = memoryview(data)
    return [Base64Piece(view, start, min(start + _BASE64_CHUNK, len(view)))
            for start in range(0, len(view), _BASE64_CHUNK)]


class ImageContent:
    """An image a tool returns; it becomes an MCP image content block."""

    def __init__(self, data, mime_type="image/jpeg"):
        self.data = data
        self.mime_type = mime_type


class ModuleText:
    """A tool's description or output schema kept as a global of a module that is loaded
    only while the text is read (read(): imported, read, dropped again on MicroPython):
    a .mpy module's string constants are heap objects for as long as it is loaded, so
    long texts that only a tools/list entry needs stay off the heap in between. Worth
    it for texts of a few hundred bytes (the object itself takes about 40)."""

    def __init__(self, module, name):
        self.module = module  # "package.module"
        self.name = name

    def read(self):
        module = __import__(self.module, None, None, (self.name,))
        try:
            return getattr(module, self.name)
        finally:
            module = None
            forget_modules(self.module)


def _text(text):
    """A str as it is, a ModuleText's text."""
    return text.read() if isinstance(text, ModuleText) else text


class McpTool:
    """A named, described callback with typed parameters.

    `callback(args)` gets a dict holding every declared property (defaults filled
    in); it may be a plain or a coroutine function. Its tools/list entry is
    serialized when a page is built, not kept: the description is the one string
    the caller gave (in flash, when frozen), and only the entry's size stays on the
    heap (tools never change after construction, so the size holds).

    `description` may also be a (template, values) tuple, formatted (`template % values`)
    only when the entry is serialized: tools made per part or per instance then share one
    template and keep no formatted string on the heap; or a ModuleText, read only when
    the entry is serialized.

    `output_schema`: the JSON Schema (an object's) of what the callback returns, as a
    dict or as its JSON text (kept as text: a literal is in flash when frozen, and a
    str takes less heap than the dicts). Clients of 2025-06-18 and later then get it
    in the entry, and each result also as `structuredContent`; the callback must
    return a dict. A ModuleText (its text checked here) is kept as it is.
    """

    output_schema = None  # JSON text; the class's None costs a tool without one no heap
    user_only = False  # these two likewise: set on a tool only where they differ
    hints = None

    def __init__(self, name, description, properties, callback, user_only=False, title=None,
                 read_only=None, destructive=None, idempotent=None, open_world=None,
                 output_schema=None):
        from .toolcheck import check_name  # while tools are made only (umcp.toolcheck)

        check_name(name)
        if properties is not None and not isinstance(properties, PropertyList):
            properties = PropertyList(properties)
        if properties is None or not len(properties):
            properties = NO_PROPERTIES
        if not callable(callback):
            raise ValueError("tool %s: callback is not callable" % name)
        self.name = name
        self.description = description
        self.properties = properties
        self.callback = callback
        if user_only:
            self.user_only = user_only
        # A tuple, not the annotations dict: a third of its heap, and the dict is only
        # wanted while an entry is serialized.
        hints = (title, read_only, destructive, idempotent, open_world)
        if hints == _NO_HINTS:
            hints = None
        elif title is None:  # a title is a tool's own: nothing to share
            for known in _SHARED_HINTS:
                if known == hints:
                    hints = known
                    break
            else:
                _SHARED_HINTS.append(hints)
        if hints is not None:
            self.hints = hints
        if output_schema is not None:
            self.output_schema = _schema_text(name, output_schema)
        # UTF-8 bytes, not characters: MicroPython's json leaves non-ASCII unescaped.
        self.json_bytes = len(self.json().encode())

    def entry_bytes(self, structured):
        """The entry's size for a client with (or without) output schemas."""
        if structured or self.output_schema is None:
            return self.json_bytes
        schema = self.output_schema
        size = schema.bytes if isinstance(schema, ModuleText) else len(schema.encode())
        return self.json_bytes - len(_OUTPUT_KEY) - size

    def json(self, portable_name=False, structured=True):
        """The tools/list entry's JSON text: `portable_name` gives the name in the form
        every client accepts (umcp.names, same length); `structured` says whether the
        client's revision has output schemas (2025-06-18 on)."""
        entry = {"name": portable(self.name) if portable_name else self.name}
        description = self.description
        if description is not None:
            if isinstance(description, tuple):
                description = description[0] % description[1]
            else:
                description = _text(description)
            entry["description"] = description
        entry["inputSchema"] = self.properties.schema()
        annotations = self.annotations()
        if annotations:
            entry["annotations"] = annotations
        text = dumps(entry)
        if structured and self.output_schema is not None:
            # Spliced in as the text it is kept as (a JSON object's text ends in "}").
            text = text[:-1] + _OUTPUT_KEY + _text(self.output_schema) + "}"
        return text

    def annotations(self):
        """The entry's MCP annotations, as a dict (empty when the tool has none)."""
        annotations = {}
        if self.user_only:
            # The xiaozhi convention: user-only tools are for the user's console, not the LLM.
            annotations["audience"] = ["user"]
        if self.hints:
            for key, value in zip(_HINT_KEYS, self.hints):
                if value is not None:
                    annotations[key] = value
        return annotations


def structured(session, modern):
    """Whether a session's revision has output schemas and structuredContent (a tools/list
    entry's form and a result's; `modern`: the request is of 2026-07-28)."""
    return modern or (session.protocol or "") >= _STRUCTURED_FROM


class ListedTool:
    """A tool's tools/list entry as one client gets it, where that differs from the tool's
    own json(): the portable name (umcp.names), or no output schema for a revision before
    2025-06-18. A page hands it to the transport as it hands an McpTool (json(),
    json_bytes: umcp.compat.piece_utf8), so it too is serialized only as it is written."""

    def __init__(self, tool, portable_name, structured):
        self.tool = tool
        self.portable_name = portable_name
        self.structured = structured
        self.json_bytes = tool.entry_bytes(structured)  # a portable name is as long

    def json(self):
        return self.tool.json(self.portable_name, self.structured)


def _schema_text(name, schema):
    """An output schema as JSON text, checked (umcp.toolcheck). A ModuleText is checked and
    kept as it is, with its text's size in UTF-8 bytes (`bytes`: entry_bytes() needs it
    for every page)."""
    from .toolcheck import output_schema_text

    if isinstance(schema, ModuleText):
        schema.bytes = len(output_schema_text(name, schema.read()).encode())
        return schema
    return output_schema_text(name, schema)


# A CallToolResult's last piece; revision 2026-07-28 results also say `resultType`.
_OK_END = const('}],"isError":false}')
_OK_END_MODERN = const('}],"isError":false,"resultType":"complete"}')
_ERROR_END = const('}],"isError":true}')
_ERROR_END_MODERN = const('}],"isError":true,"resultType":"complete"}')


def result_pieces(value, modern=False, structured=False):
    """A tool's return value as the pieces of a CallToolResult's JSON text.

    Pieces, so that a large image is never copied into one string: its base64 goes
    out as Base64Piece pieces (ASCII, nothing to escape), each encoded only as it is
    written. A string is
    sent as is; anything else (bool, int, None, dict, list) as its JSON text, which
    is what the xiaozhi backend parses. Raises TypeError for what JSON cannot carry.
    `modern`: the request came in revision 2026-07-28's form. `structured`: the tool
    has an output schema and the client's revision knows it: the dict goes out as
    `structuredContent` too (its one JSON text in both places); a value that is not a
    dict is a TypeError then.
    """
    end = _OK_END_MODERN if modern else _OK_END
    if isinstance(value, ImageContent):
        pieces = ['{"content":[{"type":"image","data":"']
        pieces.extend(base64_pieces(value.data))
        pieces.append('","mimeType":')
        pieces.append(dumps(value.mime_type))
        pieces.append(end)
        return pieces
    if structured:
        if not isinstance(value, dict):
            raise TypeError("the tool has an output schema but returned %s, not an object"
                            % type(value).__name__)
        text = dumps(value)
        return ('{"content":[{"type":"text","text":', dumps(text), '}],"structuredContent":', text,
                end[2:])
    text = value if isinstance(value, str) else dumps(value)
    return ('{"content":[{"type":"text","text":', dumps(text), end)


def error_result_pieces(message, modern=False):
    """A CallToolResult that reports a failure to the model."""
    return ('{"content":[{"type":"text","text":', dumps(message), _ERROR_END_MODERN if modern else _ERROR_END)
