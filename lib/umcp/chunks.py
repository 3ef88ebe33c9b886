"""A tool's result in small pieces, for a heap with no block as long as its JSON text:
umcp.result falls back to this when making the text whole runs out of memory, loaded for
that result only. The text is made of pieces of about CHUNK characters, so the answer needs
only the small holes a long-running heap has left, never one block as long as itself
(only a long string inside the value is a piece as long as itself)."""

from .compat import const, dumps

CHUNK = const(128)  # characters of JSON text a piece holds, about
_OPEN = const('{"content":[{"type":"text","text":"')


def result_chunks(value, end, structured):
    """The pieces of the CallToolResult umcp.result.result_pieces() makes of `value` (`end`:
    its last piece; `structured`: with structuredContent, `value` a dict), the JSON text in
    chunks. TypeError for what JSON cannot carry."""
    if structured:
        return ([_OPEN] + json_chunks(value, True) + ['"}],"structuredContent":']
                + json_chunks(value, False) + [end[2:]])
    if isinstance(value, str):  # the text as it is, escaped
        chunks = _Chunks(True)
        for start in range(0, len(value), CHUNK):
            chunks.add(value[start:start + CHUNK])
        return [_OPEN] + chunks.done() + ['"', end]
    return [_OPEN] + json_chunks(value, True) + ['"', end]


def json_chunks(value, quoted=False):
    """`value`'s JSON text as strs of about CHUNK characters, each escaped for the inside of
    a JSON string where `quoted`. TypeError for what JSON cannot carry."""
    chunks = _Chunks(quoted)
    chunks.value(value)
    return chunks.done()


class _Chunks:
    """JSON text gathered into pieces: add() takes it a token at a time."""

    def __init__(self, quoted):
        self.quoted = quoted
        self.pieces = []
        self.run = []
        self.size = 0

    def add(self, text):
        self.run.append(text)
        self.size += len(text)
        if self.size >= CHUNK:
            self.flush()

    def flush(self):
        if self.run:
            text = "".join(self.run)
            self.pieces.append(dumps(text)[1:-1] if self.quoted else text)
            self.run = []
            self.size = 0

    def done(self):
        self.flush()
        return self.pieces

    def value(self, value):
        if isinstance(value, dict):
            comma = "{"
            for key in value:
                if not isinstance(key, str):
                    key = dumps(key)  # a key is a string in JSON: 1 is "1", as json.dumps writes it
                self.add(comma + dumps(key) + ":")
                self.value(value[key])
                comma = ","
            self.add("}" if comma == "," else "{}")
        elif isinstance(value, (list, tuple)):
            comma = "["
            for item in value:
                self.add(comma)
                self.value(item)
                comma = ","
            self.add("]" if comma == "," else "[]")
        else:
            self.add(dumps(value))
