"""One page of a paged list (tools/list, resources/list, resources/templates/list): as
many entries as fit in the page limit, envelope included, and the cursor of the next.
McpServer loads this module for each page and drops it again (umcp.listing with it): a
client lists a few pages a session, and the heap serves the session better without them
meanwhile."""

from .compat import const, dumps
from .rpc import CACHE_HINTS, FRAME_OPEN, INTERNAL_ERROR, error_frame, find
from .listing import Entry, entry_bytes
from .schema import InvalidParams
from .tool import structured

_PAGE_END = const("]}}")
_PAGE_END_MODERN = "]" + CACHE_HINTS + "}}"
# A page that has more after it ends with '],"nextCursor":"<key>"}}'. Keys (tool
# names, resource URIs and URI templates) are plain ASCII that JSON needs not
# escape, so the key goes in as it is and this plus its length is the tail's size.
_MORE_HEAD = const('],"nextCursor":"')
_MORE_END = const('"}}')
_MORE_END_MODERN = '"' + CACHE_HINTS + "}}"


def page(session, id_json, params, items, key, opening, modern, offered, tools, page_limit):
    """The pieces of one page: as many entries as fit in `page_limit` (the server's; the
    session's own first), envelope included. The entries go into the pieces as they are
    (umcp.compat.piece_utf8): each is serialized only when the transport writes it, so a
    page never holds more than one entry's text (a tool goes in as a umcp.listing.Entry,
    which keeps the listing's code until it is written). `key` names the attribute that
    identifies an entry: a page that has more after it gives the next entry's key as its
    nextCursor. `offered`: the session's choice of tools (see Session), or None; `tools`:
    whether `items` are the server's tools."""
    cursor = params.get("cursor")
    with_user_tools = params.get("withUserTools") is True
    start = 0
    if cursor is not None and cursor != "":
        start = find(items, key, cursor) if isinstance(cursor, str) else -1
        if start < 0:
            raise InvalidParams("invalid cursor %s" % dumps(cursor))
    page_end = _PAGE_END_MODERN if modern else _PAGE_END
    more_end = _MORE_END_MODERN if modern else _MORE_END
    page_limit = session.page_limit or page_limit
    # A string id may hold non-ASCII characters, which MicroPython's json leaves unescaped.
    budget = (page_limit - session.overhead - len(FRAME_OPEN) - len(opening)
              - len(id_json.encode()))
    pieces = [FRAME_OPEN, id_json, opening]
    used = 0  # bytes of the entries and their commas
    with_schemas = tools and structured(session, modern)
    index = _next_listed(items, start, with_user_tools, offered)
    while index >= 0:
        after = _next_listed(items, index + 1, with_user_tools, offered)
        entry_size = entry_bytes(items[index], with_schemas) if tools else items[index].json_bytes
        size = used + (1 if used else 0) + entry_size
        if after < 0:
            tail = len(page_end)
        else:
            tail = len(_MORE_HEAD) + len(getattr(items[after], key)) + len(more_end)
        if size + tail > budget:
            break
        if used:
            pieces.append(",")
        entry = items[index]
        if tools:
            entry = Entry(entry, session.portable, with_schemas)  # this client's form of it
        pieces.append(entry)  # serialized as the transport writes it
        used = size
        index = after
    if index < 0:
        pieces.append(page_end)
    elif used == 0:
        item = items[index]
        return error_frame(id_json, INTERNAL_ERROR, "%s (%d bytes) does not fit in a page of %d bytes"
                           % (getattr(item, key), item.json_bytes, page_limit))
    else:
        pieces.append(_MORE_HEAD)
        pieces.append(getattr(items[index], key))
        pieces.append(more_end)
    return pieces


def _next_listed(items, start, with_user_tools, offered=None):
    for index in range(start, len(items)):
        item = items[index]
        if offered is not None:
            if offered(item):
                return index
        elif with_user_tools or not item.user_only:
            return index
    return -1
