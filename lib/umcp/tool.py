"""A tool and the shaping of its result for tools/call. How a tool is listed (its
tools/list entry) is umcp.listing's, loaded while tools are made and for each page."""

from .compat import call_then_forget, const, dumps, forget_modules
from .schema import NO_PROPERTIES, PropertyList

# From 2025-06-18 on, tools have output schemas and results structuredContent.
_STRUCTURED_FROM = const("2025-06-18")

_NO_HINTS = const((None, None, None, None, None))
_SHARED_HINTS = []  # one tuple for each set of hints in use: most tools share a handful


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
    it for texts of a few hundred bytes (the object itself takes about 40). (Here, not in
    umcp.listing, which reads them: an object outlives the module that is dropped, and
    its class would keep that module's code on the heap.)"""

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


class McpTool:
    """A named, described callback with typed parameters.

    `callback(args)` gets a dict holding every declared property (defaults filled
    in); it may be a plain or a coroutine function. Its tools/list entry is
    serialized when a page is built, not kept: the description is the one string
    the caller gave (in flash, when frozen), and only the entry's size stays on the
    heap (tools never change after construction, so the size holds).

    `description` may also be a (template, values) tuple, formatted (`template % values`)
    only when the entry is serialized: tools made per part or per instance then share one
    template and keep no formatted string on the heap; or a ModuleText, read
    only when the entry is serialized.

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
        from .listing import entry_size, schema_text  # while tools are made only

        if output_schema is not None:
            self.output_schema = schema_text(name, output_schema)
        self.json_bytes = entry_size(self)


def structured(session, modern):
    """Whether a session's revision has output schemas and structuredContent (a tools/list
    entry's form and a result's; `modern`: the request is of 2026-07-28)."""
    return modern or (session.protocol or "") >= _STRUCTURED_FROM


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
        # Loaded for each image and forgotten (photos are rare); its pieces keep what
        # they need of it until they are written.
        return call_then_forget("umcp.image", "image_pieces", value, end)
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
