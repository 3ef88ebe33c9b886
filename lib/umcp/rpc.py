"""JSON-RPC 2.0 as the server writes it: error codes, the frames of responses, and the
small lookups the method handlers share. A leaf of umcp: `server` and `resource` both
build their answers here, and it imports nothing of theirs."""

from .args import is_int
from .compat import const, dumps

PARSE_ERROR = const(-32700)
INVALID_REQUEST = const(-32600)
METHOD_NOT_FOUND = const(-32601)
INVALID_PARAMS = const(-32602)
INTERNAL_ERROR = const(-32603)
RESOURCE_NOT_FOUND = const(-32002)  # up to 2025-11-25; -32602 from 2026-07-28 (SEP-2164)
UNSUPPORTED_VERSION = const(-32022)

# Every response starts so, and its id follows.
FRAME_OPEN = '{"jsonrpc":"2.0","id":'

# Revision 2026-07-28 results say they are complete, and cacheable ones how long a
# client may keep them: the device's tools, resources and state change at any
# time and nothing announces it on that revision's wire, so not at all (ttlMs 0),
# and only for this caller ("private").
CACHE_HINTS = ',"resultType":"complete","ttlMs":0,"cacheScope":"private"'

# The pieces of an empty result ({}), shared: frames never change their pieces.
EMPTY_RESULT = ("{}",)

# MCP's log levels, lowest first: a level's index ranks it.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def valid_id(value):
    """JSON-RPC ids here: a string or an integer (never null, a float or a bool)."""
    return isinstance(value, str) or is_int(value)


def describe(error):
    """An exception as a message: its text, or its class name when it has none."""
    return str(error) or type(error).__name__


def find(items, key, value):
    """The index of the first of `items` whose attribute `key` equals `value`, or -1."""
    for index in range(len(items)):
        if getattr(items[index], key) == value:
            return index
    return -1


def result_frame(id_json, pieces):
    """A response's pieces around the pieces of its result, which stay as they are."""
    frame = [FRAME_OPEN, id_json, ',"result":']
    frame.extend(pieces)
    frame.append("}")
    return frame


def error_frame(id_json, code, message, data_json=None):
    if data_json is None:
        return ('{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}' % (id_json, code, dumps(message)),)
    return ('{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s,"data":%s}}'
            % (id_json, code, dumps(message), data_json),)


def is_response(pieces):
    """Whether a message the server sends is a response (its frame starts with the id),
    not a notification: what a transport that answers each request on its own stream
    needs to know of a message."""
    return pieces[0].startswith(FRAME_OPEN)


_CODE_AT = '"error":{"code":'


def error_code(pieces):
    """The code of an error frame made by error_frame(), or None for any other message
    (a transport's HTTP status follows it)."""
    if len(pieces) != 1:
        return None
    text = pieces[0]
    start = text.find(_CODE_AT, len(FRAME_OPEN))
    if start < 0:
        return None
    start += len(_CODE_AT)
    end = text.find(",", start)
    try:
        return int(text[start:end])
    except ValueError:
        return None
