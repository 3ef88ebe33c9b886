"""A tool: its description for tools/list and the shaping of its result for tools/call."""

from binascii import b2a_base64

from .compat import const, dumps
from .schema import NO_PROPERTIES, PropertyList

_NAME_CHARS = const("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")

# MCP annotation keys, in the order of McpTool's hint arguments.
_HINT_KEYS = const(("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"))
_NO_HINTS = const((None, None, None, None, None))
_SHARED_HINTS = []  # one tuple for each set of hints in use: most tools share a handful


def check_name(name):
    """MCP tool names: 1 to 128 characters of A-Z a-z 0-9 _ - ."""
    if not isinstance(name, str) or not 1 <= len(name) <= 128:
        raise ValueError("tool name must be 1 to 128 characters: %r" % (name,))
    for char in name:
        if char not in _NAME_CHARS:
            raise ValueError("tool name %r has a character outside A-Z a-z 0-9 _ - ." % (name,))


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


class McpTool:
    """A named, described callback with typed parameters.

    `callback(args)` gets a dict holding every declared property (defaults filled
    in); it may be a plain or a coroutine function. Its tools/list entry is
    serialized when a page is built, not kept: the description is the one string
    the caller gave (in flash, when frozen), and only the entry's size stays on the
    heap (tools never change after construction, so the size holds).

    `description` may also be a (template, values) tuple, formatted (`template % values`)
    only when the entry is serialized: tools made per part or per instance then share one
    template and keep no formatted string on the heap.
    """

    def __init__(self, name, description, properties, callback, user_only=False, title=None,
                 read_only=None, destructive=None, idempotent=None, open_world=None):
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
        self.hints = hints
        # UTF-8 bytes, not characters: MicroPython's json leaves non-ASCII unescaped.
        self.json_bytes = len(self.json().encode())

    def json(self):
        """The tools/list entry's JSON text."""
        entry = {"name": self.name}
        description = self.description
        if description is not None:
            if isinstance(description, tuple):
                description = description[0] % description[1]
            entry["description"] = description
        entry["inputSchema"] = self.properties.schema()
        annotations = self.annotations()
        if annotations:
            entry["annotations"] = annotations
        return dumps(entry)

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


# A CallToolResult's last piece; revision 2026-07-28 results also say `resultType`.
_OK_END = const('}],"isError":false}')
_OK_END_MODERN = const('}],"isError":false,"resultType":"complete"}')
_ERROR_END = const('}],"isError":true}')
_ERROR_END_MODERN = const('}],"isError":true,"resultType":"complete"}')


def result_pieces(value, modern=False):
    """A tool's return value as the pieces of a CallToolResult's JSON text.

    Pieces, so that a large image is never copied into one string: its base64 goes
    out as Base64Piece pieces (ASCII, nothing to escape), each encoded only as it is
    written. A string is
    sent as is; anything else (bool, int, None, dict, list) as its JSON text, which
    is what the xiaozhi backend parses. Raises TypeError for what JSON cannot carry.
    `modern`: the request came in revision 2026-07-28's form.
    """
    end = _OK_END_MODERN if modern else _OK_END
    if isinstance(value, ImageContent):
        pieces = ['{"content":[{"type":"image","data":"']
        pieces.extend(base64_pieces(value.data))
        pieces.append('","mimeType":')
        pieces.append(dumps(value.mime_type))
        pieces.append(end)
        return pieces
    text = value if isinstance(value, str) else dumps(value)
    return ('{"content":[{"type":"text","text":', dumps(text), end)


def error_result_pieces(message, modern=False):
    """A CallToolResult that reports a failure to the model."""
    return ('{"content":[{"type":"text","text":', dumps(message), _ERROR_END_MODERN if modern else _ERROR_END)
