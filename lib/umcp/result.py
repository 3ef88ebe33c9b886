"""A tool's result as a CallToolResult's pieces, for tools/call: what a connected device runs
for each call, resident. ImageContent is what a tool returns for an image. (How a tool is
made, McpTool, is umcp.tool's; how it is listed, umcp.listing's.)"""

from .compat import call_then_forget, const, dumps

# From 2025-06-18 on, tools have output schemas and results structuredContent.
_STRUCTURED_FROM = const("2025-06-18")


class ImageContent:
    """An image a tool returns: its result becomes an MCP image content block, the data
    sent as base64 in pieces.

    :param data: The image, a bytes-like object.
    :param mime_type: Its MIME type.
    """

    def __init__(self, data, mime_type="image/jpeg"):
        self.data = data
        self.mime_type = mime_type


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
    is what the xiaozhi backend parses; where the heap has no block as long as that text,
    as pieces of it (umcp.chunks). Raises TypeError for what JSON cannot carry.
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
    if structured and not isinstance(value, dict):
        raise TypeError("the tool has an output schema but returned %s, not an object"
                        % type(value).__name__)
    try:
        if structured:
            text = dumps(value)
            return ('{"content":[{"type":"text","text":', dumps(text), '}],"structuredContent":',
                    text, end[2:])
        text = value if isinstance(value, str) else dumps(value)
        return ('{"content":[{"type":"text","text":', dumps(text), end)
    except MemoryError:
        # No block of heap as long as the text (a long-running heap has small holes):
        # the same text in small pieces (umcp.chunks, loaded for this result).
        text = None
        return call_then_forget("umcp.chunks", "result_chunks", value, end, structured)


def error_result_pieces(message, modern=False):
    """A CallToolResult that reports a failure to the model."""
    return ('{"content":[{"type":"text","text":', dumps(message), _ERROR_END_MODERN if modern else _ERROR_END)
