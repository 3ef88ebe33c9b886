"""One page of a paged list (tools/list, resources/list, resources/templates/list): as
many entries as fit in the page limit, envelope included, and the cursor of the next.
McpServer loads this module for each page and drops it again (umcp.listing with it): a
client lists a few pages a session, and the heap serves the session better without them
meanwhile."""

from .args import InvalidParams
from .compat import const, dumps
from .rpc import CACHE_HINTS, FRAME_OPEN, INTERNAL_ERROR, error_frame, find
from .result import structured

# A page's ends (the host writes a catalogue's pages with them too: umcp.catalogue).
PAGE_END = const("]}}")
_PAGE_END_MODERN = "]" + CACHE_HINTS + "}}"
# A page that has more after it ends with '],"nextCursor":"<key>"}}'. Keys (tool
# names, resource URIs and URI templates) are plain ASCII that JSON needs not
# escape, so the key goes in as it is and this plus its length is the tail's size.
MORE_HEAD = const('],"nextCursor":"')
MORE_END = const('"}}')
_MORE_END_MODERN = '"' + CACHE_HINTS + "}}"


def page(session, id_json, params, items, key, opening, modern, offered, tools, page_limit,
         room, catalogue=None):
    """The pieces of one page: as many entries as fit in `page_limit` (the session's, else
    the server's), envelope included: `room` is what the frame leaves the result after its
    envelope and id (McpServer.page). The entries go into the pieces as they are
    (umcp.compat.piece_utf8): each is serialized only when the transport writes it, so a
    page never holds more than one entry's text (a tool goes in as a umcp.listing.Entry,
    which keeps the listing's code until it is written). `key` names the attribute that
    identifies an entry: a page that has more after it gives the next entry's key as its
    nextCursor. `offered`: the session's choice of tools (see Session), or None; `tools`:
    whether `items` are the server's tools, and `catalogue` the server's umcp.catalogue,
    whose tools come first (read from its file one record at a time, their entries as they
    are written; umcp.listing is loaded only for tools made at run time)."""
    with_schemas = tools and structured(session, modern)
    if catalogue is not None:
        items = _Listing(catalogue, items, session.portable, with_schemas)
    cursor = params.get("cursor")
    with_user_tools = params.get("withUserTools") is True
    hidden = session.server.hidden if tools else None  # (McpServer.set_hidden)
    start = 0
    if cursor is not None and cursor != "":
        start = find(items, key, cursor) if isinstance(cursor, str) else -1
        if start < 0:
            raise InvalidParams("invalid cursor %s" % dumps(cursor))
    page_end = _PAGE_END_MODERN if modern else PAGE_END
    more_end = _MORE_END_MODERN if modern else MORE_END
    budget = room - len(opening)
    pieces = [FRAME_OPEN, id_json, opening]
    used = 0  # bytes of the entries and their commas
    index = _next_listed(items, start, with_user_tools, offered, hidden)
    item = items[index] if index >= 0 else None
    while item is not None:
        after = _next_listed(items, index + 1, with_user_tools, offered, hidden)
        following = items[after] if after >= 0 else None
        entry_size = _entry_bytes(item, with_schemas) if tools else item.json_bytes
        size = used + (1 if used else 0) + entry_size
        if following is None:
            tail = len(page_end)
        else:
            tail = len(MORE_HEAD) + len(getattr(following, key)) + len(more_end)
        if size + tail > budget:
            break
        if used:
            pieces.append(",")
        if tools:
            item = _entry(item, session.portable, with_schemas)  # this client's form of it
        pieces.append(item)  # serialized as the transport writes it
        used = size
        index, item = after, following
    if item is None:
        pieces.append(page_end)
    elif used == 0:
        return error_frame(id_json, INTERNAL_ERROR, "%s (%d bytes) does not fit in a page of %d bytes"
                           % (getattr(item, key), item.json_bytes, page_limit))
    else:
        pieces.append(MORE_HEAD)
        pieces.append(getattr(item, key))
        pieces.append(more_end)
    return pieces


def _next_listed(items, start, with_user_tools, offered=None, hidden=None):
    for index in range(start, len(items)):
        item = items[index]
        if item is None or hidden is not None and hidden(item.name):
            continue  # a catalogue's tool removed at run time, or one hidden
        if offered is not None:
            if offered(item):
                return index
        elif with_user_tools or not item.user_only:
            return index
    return -1


def _entry_bytes(tool, structured):
    if isinstance(tool, Listed):
        return tool.json_bytes  # in the page's form already
    from .listing import entry_bytes

    return entry_bytes(tool, structured)


def _entry(tool, portable_name, structured):
    """A tool's entry as a page's piece, in one client's form."""
    if isinstance(tool, Listed):
        return tool.piece
    from .listing import Entry

    return Entry(tool, portable_name, structured)


class _Listing:
    """The server's tools as one sequence for one page: the catalogue's (Listed, a record
    read as it is asked for; None for one removed), then those made at run time. It also
    reads the catalogue's entries in the page's form as the transport writes them: a
    catalogue entry's piece is (this listing, its index) (umcp.compat.piece_utf8)."""

    def __init__(self, catalogue, tools, portable_name, structured):
        from .catalogue import USER_ONLY  # (loaded with the catalogue): once a page

        self.user_only_flag = USER_ONLY
        self.catalogue = catalogue
        self.tools = tools
        self.portable_name = portable_name
        self.structured = structured
        self.last = None  # the page asks for an entry twice in a row: read once

    def __len__(self):
        return self.catalogue.count + len(self.tools)

    def __getitem__(self, index):
        count = self.catalogue.count
        if index >= count:
            return self.tools[index - count]
        last = self.last
        if last is None or last.piece[1] != index:
            last = self.last = Listed(self, index, self.catalogue.record(index))
        return None if last.name in self.catalogue.removed else last

    def size(self, record):
        # '{"name":"' name '"' rest [extra] '}': a portable name is as long
        return 11 + len(record[0]) + record[3] + (record[4] if self.structured else 0)

    def json_bytes(self, index):
        return self.size(self.catalogue.record(index))

    def json(self, index):
        record = self.catalogue.record(index)
        name = record[0]
        if self.portable_name:
            from .names import portable

            name = portable(name)
        data = bytearray(self.size(record))
        head = '{"name":"%s"' % name
        start = len(head)
        data[:start] = head.encode()
        with open(self.catalogue.path, "rb") as f:
            f.seek(record[2])
            f.readinto(memoryview(data)[start:-1])
        data[-1] = 125  # "}"
        return data


class Listed:
    """A catalogue's tool as a page looks at it: its name, whether it is user-only, its
    entry's size in the page's form, and its piece."""

    def __init__(self, listing, index, record):
        self.name = record[0]
        self.user_only = bool(record[1] & listing.user_only_flag)
        self.json_bytes = listing.size(record)
        self.piece = (listing, index)
