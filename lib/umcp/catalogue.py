"""Tools as data: a board's tools, written once on the host into `tools.cat`
(tools/board/catalogue.py), served from the file without a tool object, schema or naming
code on the heap. The server keeps one Catalogue (McpServer.catalogue); tools added at run
time (a maker's add_tool()) are objects listed after it.

A call reads its tool's record and parameter table; a tools/list page whose form and room
match a page record is read from the file as the transport writes it. The file's format:
docs/boards.md, "The tool catalogue (tools.cat)". Whoever installs a catalogue checks its
header first (umcpfw.boot). Only what a call and a page read is here, resident.
"""

from .args import check_arguments
from .compat import const
from .jsonin import loads
from .result import structured
from .rpc import FRAME_OPEN

FORMAT = 2
USER_ONLY = const(1)
STRUCTURED = const(2)  # a tool: has an output schema; a page: the entries with it
WITH_USER_TOOLS = const(4)  # a page: of a tools/list asked withUserTools
_CHUNK = const(256)  # bytes of a page read at a time, as the transport writes them


class CatalogueTool:
    """A catalogue's tool for one call: what the server needs of a tool (name, user_only,
    output_schema, callback, properties.validate())."""

    user_only = False  # class defaults: a call's tool keeps only what differs
    output_schema = None

    def __init__(self, name, flags, callback, rows):
        self.name = name
        if flags & USER_ONLY:
            self.user_only = True
        if flags & STRUCTURED:
            self.output_schema = True
        self.callback = callback
        self.rows = rows

    @property
    def properties(self):
        return self  # validate() is the table's

    def validate(self, arguments):
        return check_arguments(self.rows, arguments)


class Catalogue:
    """The catalogue at `path` (its header read: umcpfw.boot.catalogue_header()), its targets
    made callbacks by `resolve(target)`. Tools removed at run time (McpServer.remove_tool)
    stay in the file and are skipped."""

    removed = ()
    # The latest call's tool and the name it was asked by: a client calls the same tools
    # again and again, and finding one reads and parses its records (a file opened, about
    # 0.7 KB of garbage a call). One tool kept, a few hundred bytes.
    _asked = None
    _tool = None

    def __init__(self, path, header, resolve):
        self.path = path
        self.count = header["count"]
        self.pages = header["pages"]
        self.width = header["width"]
        self.start = header["start"]
        self.texts = self.start + (self.count + self.pages) * self.width
        self.resolve = resolve

    def record(self, index, f=None):
        """Record `index` (a tool's, then the pages'), its offset from the file's start;
        `f`: the file, open."""
        if f is None:
            with open(self.path, "rb") as f:
                return self.record(index, f)
        f.seek(self.start + index * self.width)
        record = loads(f.read(self.width))
        record[2] += self.texts
        return record

    def find(self, name, f=None):
        """The record of the tool called `name`, or whose portable form it is, or None; `f`:
        the file, open. A name with a dot is the device's form (the xiaozhi link's): looked
        for as it is, then, only if no name is it, in the portable form (umcp.names: loaded
        only then); a name without one is compared in the portable form at once (the
        portable forms are unique: umcp.toolcheck). The records are read into one buffer
        and their names compared in place: only the one found is parsed."""
        if f is None:
            with open(self.path, "rb") as f:
                return self.find(name, f)
        key = name.encode()
        stop = len(key) + 2  # a record starts ["name"
        raw = bytearray(self.width)
        portable = near = "." not in name
        while True:
            if portable:
                from .names import same  # a client of portable names

                view = memoryview(raw)
            f.seek(self.start)
            for _ in range(self.count):
                f.readinto(raw)
                if stop >= len(raw) or raw[stop] != 34:  # '"': not a name of that length
                    continue
                if portable:
                    if not same(view[2:stop], key):
                        continue
                elif not raw.startswith(key, 2):
                    near = True  # a name of that length that is not `name`
                    continue
                record = loads(raw)
                if record[0] not in self.removed:
                    record[2] += self.texts
                    return record
            if portable or not near:
                return None
            portable = True

    def tool(self, name):
        """A CatalogueTool for a call of `name`, or None when there is no such tool (the
        latest one found is kept for the next call of the same name)."""
        tool = self._tool
        if tool is not None and name == self._asked and tool.name not in self.removed:
            return tool
        self._tool = None  # (its heap first)
        with open(self.path, "rb") as f:  # its record, then its table
            record = self.find(name, f)
            if record is None:
                return None
            f.seek(record[2] + record[3] + record[4])
            target, rows = loads(f.read(record[5]))
        tool = CatalogueTool(record[0], record[1], self.resolve(target), rows)
        self._asked = name
        self._tool = tool
        return tool

    def page(self, session, id_json, params, room, with_user_tools):
        """The pieces of the tools/list page asked by `params` in `session`'s form (not in
        the portable form, nor of 2026-07-28: the server asks only then), the user-only
        tools listed where `with_user_tools`, read from its page record as the transport
        writes them, where it is the page umcp.paging would cut for `room` (what the frame
        leaves the result: see above); None otherwise."""
        cursor = params.get("cursor")
        if cursor is None:
            cursor = ""  # the first page's record
        form = (WITH_USER_TOOLS if with_user_tools else 0) | (STRUCTURED if structured(session, False) else 0)
        with open(self.path, "rb") as f:
            for index in range(self.count, self.count + self.pages):
                record = self.record(index, f)
                if record[1] == form and record[0] == cursor:
                    break
            else:
                return None
        offset, length, longer = record[2], record[3], record[4]
        if length > room or (longer and room >= longer):
            return None
        pieces = [FRAME_OPEN, id_json]
        end = offset + length
        while offset < end:
            pieces.append((self, (offset, min(_CHUNK, end - offset))))
            offset += _CHUNK
        return pieces

    def json_bytes(self, span):
        return span[1]

    def json(self, span):
        """The file's bytes at `span` (offset, length): a piece of a page, read as the
        transport writes it (umcp.compat.piece_utf8)."""
        with open(self.path, "rb") as f:
            f.seek(span[0])
            return f.read(span[1])
