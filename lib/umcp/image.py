"""Images and blobs in results: base64 pieces encoded only as a transport writes them.
Loaded for each image result (umcp.tool) or blob resource (umcp.resource) and forgotten
after: the pieces keep their class until they are written."""

from binascii import b2a_base64

from .compat import const, dumps

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


def image_pieces(image, end):
    """A CallToolResult's pieces for an ImageContent; `end` closes the result."""
    pieces = ['{"content":[{"type":"image","data":"']
    pieces.extend(base64_pieces(image.data))
    pieces.append('","mimeType":')
    pieces.append(dumps(image.mime_type))
    pieces.append(end)
    return pieces
