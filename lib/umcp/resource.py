"""Resources: what a device lets a client read by URI, the shaping of their contents,
and the answer to resources/read. McpServer imports this module at its first resource
(or such a request), so a device without resources never loads it; the server finds
what a URI names (McpServer.find_resource) and this module reads it, never the other
way round."""

from binascii import b2a_base64

from .compat import dumps, get_logger, iscoroutine
from .rpc import CACHE_HINTS, INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, describe, error_frame, result_frame
from .schema import InvalidParams

# What closes a content (text: its "}"; blob: the base64's quote too) and the result.
_TEXT_END = "}]}"
_TEXT_END_MODERN = "}]" + CACHE_HINTS + "}"
_BLOB_END = '"}]}'
_BLOB_END_MODERN = '"}]' + CACHE_HINTS + "}"

_log = get_logger("umcp")

# RFC 3986 characters a URI may hold as they are (percent-escapes included via "%"),
# less nothing: no space, quote, backslash, braces or control characters. So a URI
# goes into JSON (a listing's nextCursor) without escaping.
_URI_CHARS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
              "-._~:/?#[]@!$&'()*+,;=%")
_SCHEME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-."

JSON_MIME = "application/json"


def _check_uri(uri, extra=""):
    """A URI (RFC 3986: a scheme, ':', then the rest) of at most 512 plain characters."""
    if not isinstance(uri, str) or not 3 <= len(uri) <= 512:
        raise ValueError("resource URI must be 3 to 512 characters: %r" % (uri,))
    colon = uri.find(":")
    if colon < 1 or not "a" <= uri[0].lower() <= "z":
        raise ValueError("resource URI %r has no scheme" % (uri,))
    for char in uri[:colon]:
        if char not in _SCHEME_CHARS:
            raise ValueError("resource URI %r has an invalid scheme" % (uri,))
    for char in uri:
        if char not in _URI_CHARS and char not in extra:
            raise ValueError("resource URI %r has a character a URI cannot hold: %r" % (uri, char))


class _Listed:
    """What resources/list and resources/templates/list page through (as McpTool)."""

    user_only = False

    def __init__(self, name, read, description, mime_type):
        if not isinstance(name, str) or not name:
            raise ValueError("resource name must be a non-empty string")
        if not callable(read):
            raise ValueError("resource %s: read is not callable" % name)
        if mime_type is not None and not isinstance(mime_type, str):
            raise ValueError("resource %s: mime_type must be a string" % name)
        self.name = name
        self.read = read
        self.description = description
        self.mime_type = mime_type

    def json(self):
        """The list entry's JSON text, made when a page is built (as McpTool's)."""
        key, attribute = self.locator
        entry = {key: getattr(self, attribute), "name": self.name}
        if self.description is not None:
            entry["description"] = self.description
        if self.mime_type is not None:
            entry["mimeType"] = self.mime_type
        return dumps(entry)


class McpResource(_Listed):
    """A resource at a fixed URI. `read()` (plain or coroutine function) returns its
    contents: a str (text), a bytes-like object (a blob, sent as base64) or a dict or
    list (JSON text)."""

    locator = ("uri", "uri")  # (its key in a list entry, the attribute holding it)

    def __init__(self, uri, name, read, description=None, mime_type=None):
        _check_uri(uri)
        _Listed.__init__(self, name, read, description, mime_type)
        self.uri = uri
        self.json_bytes = len(self.json().encode())


class McpResourceTemplate(_Listed):
    """Resources whose URIs fit an RFC 6570 level-1 template (`device://sensor/{id}`).

    `read(variables)` gets a dict of the variables' values as they appear in the URI
    (each non-empty, without '/', '?' or '#'), and returns contents as McpResource's
    `read()` does; raising KeyError means no such resource.
    """

    locator = ("uriTemplate", "uri_template")

    def __init__(self, uri_template, name, read, description=None, mime_type=None):
        _check_uri(uri_template, "{}")
        _Listed.__init__(self, name, read, description, mime_type)
        self.uri_template = uri_template
        self._parts = _parse_template(uri_template)
        self.json_bytes = len(self.json().encode())

    def match(self, uri):
        """The variables of `uri` as a dict, or None when it does not fit the template."""
        parts = self._parts
        literal = parts[0]
        if not uri.startswith(literal):
            return None
        pos = len(literal)
        variables = {}
        for index in range(1, len(parts), 2):
            literal = parts[index + 1]
            if literal:
                end = uri.find(literal, pos)
                if end < 0:
                    return None
            else:  # only the last variable may have no literal after it
                end = len(uri)
            value = uri[pos:end]
            if not value or "/" in value or "?" in value or "#" in value:
                return None
            variables[parts[index]] = value
            pos = end + len(literal)
        return variables if pos == len(uri) else None


def _parse_template(template):
    """[literal, name, literal, name, ..., literal] of a level-1 template."""
    parts = []
    pos = 0
    while True:
        start = template.find("{", pos)
        if start < 0:
            if "}" in template[pos:]:
                raise ValueError("URI template %r has an unmatched '}'" % template)
            parts.append(template[pos:])
            return parts
        end = template.find("}", start)
        literal = template[pos:start]
        name = template[start + 1:end] if end > 0 else ""
        if end < 0 or not name or "{" in name or "}" in literal:
            raise ValueError("URI template %r: braces must hold a variable name" % template)
        for char in name:
            if not (char.isalpha() or char.isdigit() or char == "_"):
                raise ValueError("URI template %r: only simple {name} variables (RFC 6570 level 1)" % template)
        if len(parts) > 1 and not literal:
            raise ValueError("URI template %r: two variables need a literal between them" % template)
        if _has_variable(parts, name):
            raise ValueError("URI template %r: variable %s appears twice" % (template, name))
        parts.append(literal)
        parts.append(name)
        pos = end + 1


def _has_variable(parts, name):
    for index in range(1, len(parts), 2):
        if parts[index] == name:
            return True
    return False


_TEXT = ',"text":'
_BLOB = ',"blob":"'


def contents_pieces(uri, mime_type, value, modern=False):
    """A ReadResourceResult's pieces for what a read callback returned.

    A str is the text; a bytes-like object a blob, its base64 the bytes b2a_base64
    made (never copied into a str); a dict or list its JSON text (application/json
    unless the resource says otherwise). `modern`: in revision 2026-07-28's form.
    Raises TypeError for anything else.
    """
    if isinstance(value, (dict, list)):
        value = dumps(value)
        if mime_type is None:
            mime_type = JSON_MIME
    pieces = ['{"contents":[{"uri":', dumps(uri)]
    if mime_type is not None:
        pieces.append(',"mimeType":')
        pieces.append(dumps(mime_type))
    if isinstance(value, str):
        pieces.append(_TEXT)
        pieces.append(dumps(value))
        pieces.append(_TEXT_END_MODERN if modern else _TEXT_END)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        pieces.append(_BLOB)
        pieces.append(b2a_base64(value, newline=False))
        pieces.append(_BLOB_END_MODERN if modern else _BLOB_END)
    else:
        raise TypeError("a resource reads as str, bytes or JSON (dict, list), not %s" % type(value).__name__)
    return pieces


def not_found_frame(id_json, uri, modern):
    """No resource at `uri`: -32002 on the legacy revisions, -32602 on 2026-07-28."""
    return error_frame(id_json, INVALID_PARAMS if modern else RESOURCE_NOT_FOUND,
                       "resource not found: " + uri, '{"uri":%s}' % dumps(uri))


async def read(found, uri, id_json, modern):
    """The frame answering resources/read of `uri`; `found` is what
    McpServer.find_resource(uri) gave."""
    if found is None:
        return not_found_frame(id_json, uri, modern)
    resource, variables = found
    try:
        value = resource.read() if variables is None else resource.read(variables)
        if iscoroutine(value):
            value = await value
        return result_frame(id_json, contents_pieces(uri, resource.mime_type, value, modern))
    except KeyError:  # a template's read knows no such resource
        return not_found_frame(id_json, uri, modern)
    except InvalidParams:
        raise
    except Exception as e:
        _log.warning("reading %s failed: %s", uri, describe(e))
        return error_frame(id_json, INTERNAL_ERROR, "reading %s failed: %s" % (uri, describe(e)))
