"""Answers to what could not be read: -32700, with a null id for text that is not JSON
(JSON-RPC 2.0: an id that could not be detected is null) and with the request's id where
well-formed text was refused for its depth or size, or memory cut it short, and the text
shows a request's id and method; and the id of a request echoed as the client wrote it
when its decoding replaced a lone surrogate. McpServer loads this module for such a
message and drops it again: a well-behaved client never costs its heap."""

from .compat import dumps, get_logger
from .jsonpeek import read_id
from .rpc import PARSE_ERROR, error_frame, valid_id

_REPLACED = "\ufffd"  # what umcp.jsonin puts in place of a lone surrogate

_log = get_logger("umcp")


def id_text(request_id, token):
    """The JSON text an answer carries `request_id` in, given `token`, the id's text as
    the client wrote it. A string whose decoding replaced a lone surrogate escape
    ("\\ud800") with U+FFFD goes back as it came, escapes and all, so that the client's
    parser reads the very same string (json.dumps escapes such a string so too); a token
    with a raw control character is no JSON to echo. Anything else: compact JSON."""
    if isinstance(request_id, str) and _REPLACED in request_id and "\\u" in token:
        for char in token:
            if char < " ":
                return dumps(request_id)
        return token
    return dumps(request_id)


def echo_id(request_id, id_json, raw, inside):
    """The id text of a request whose string id holds U+FFFD: as the client wrote it in
    `raw` (the text the request came in; `inside`: the envelope member holding it) where
    that text shows it as a string, else `id_json`. The request was parsed, so the text's
    top-level id is the one it carries (the last, if repeated, as json reads it)."""
    found = read_id(raw, inside, False, False)
    if found is not None and found[1][:1] == '"':
        return id_text(request_id, found[1])
    return id_json


async def refuse(server, session, data, reason, inside):
    """McpServer.refuse: -32700 to `session`, with the id of the request `data` shows
    unless `reason` says it is not JSON (else null): its id may be anything then, or a
    response's, which must never be answered."""
    id_json = "null"
    try:
        # umcp.jsonin's reason for text that is not JSON starts so.
        if data is not None and not reason.startswith("invalid JSON"):
            found = read_id(data, inside, True)
            if found is not None and valid_id(found[0]):
                id_json = id_text(found[0], found[1])
        data = None
        _log.warning("unreadable message (id %s): %s", id_json, reason)
        await server.send(session, error_frame(id_json, PARSE_ERROR, "parse error: " + reason))
    except MemoryError:
        data = None
        await server.answer_out_of_memory(session, id_json)
