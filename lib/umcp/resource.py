"""Resources: what a device lets a client read by URI, the shaping of their contents,
their registration on a server and every resources/* request. McpServer imports this
module at its first resource (or such a request), so a device without resources never
loads it. The functions here take the server (and the client's Session) as their first
arguments: the server holds the lists, this module does the work, and it imports
nothing of the server's."""

import asyncio

from .args import InvalidParams
from .compat import call_then_forget, const, dumps, get_logger, iscoroutine
from .rpc import (CACHE_HINTS, EMPTY_RESULT, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND,
                  RESOURCE_NOT_FOUND, describe, error_frame, find, result_frame)

# At most this many resources/subscribe URIs are remembered per client (each costs its string).
MAX_SUBSCRIPTIONS = const(8)

_RESOURCES_OPEN = ',"result":{"resources":['
_TEMPLATES_OPEN = ',"result":{"resourceTemplates":['

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
    """A resource at a fixed URI (McpServer.add_resource makes one).

    :param uri: Its URI, with a scheme (``device://status``).
    :param name: Its name, as resources/list shows it.
    :param read: ``read()``, a plain or coroutine function, returns the contents: a str
                 (text), a bytes-like object (a blob, sent as base64) or a dict or list
                 (JSON text).
    :param description: A description for clients (optional).
    :param mime_type: The contents' MIME type (optional).
    :raises ValueError: When an argument is not valid.
    """

    locator = ("uri", "uri")  # (its key in a list entry, the attribute holding it)

    def __init__(self, uri, name, read, description=None, mime_type=None):
        _check_uri(uri)
        _Listed.__init__(self, name, read, description, mime_type)
        self.uri = uri
        self.json_bytes = len(self.json().encode())


class McpResourceTemplate(_Listed):
    """Resources whose URIs fit an RFC 6570 level-1 template, such as
    ``device://sensor/{id}`` (McpServer.add_resource_template makes one).

    :param uri_template: The template: simple ``{name}`` variables, a literal between two.
    :param name: Its name, as resources/templates/list shows it.
    :param read: ``read(variables)`` gets a dict of the variables' values as they appear
                 in the URI (each non-empty, without '/', '?' or '#') and returns
                 contents as McpResource's ``read()`` does; raising KeyError means there
                 is no such resource.
    :param description: A description for clients (optional).
    :param mime_type: The contents' MIME type (optional).
    :raises ValueError: When the template or another argument is not valid.
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

    A str is the text; a bytes-like object a blob, its base64 in pieces encoded as
    they are written (umcp.image.base64_pieces: never whole on the heap); a dict or list its JSON text (application/json
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
        pieces.extend(call_then_forget("umcp.image", "base64_pieces", value))  # as tool.py's
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


# -- registration (McpServer's add_resource ... find_resource) ------------------------


def add_resource(server, uri, name=None, read=None, description=None, mime_type=None):
    resource = uri if isinstance(uri, McpResource) else McpResource(uri, name, read, description, mime_type)
    if find(server.resources, "uri", resource.uri) >= 0:
        raise ValueError("a resource at %s is already registered" % resource.uri)
    server.resources.append(resource)
    _changed(server)
    return resource


def add_template(server, uri_template, name=None, read=None, description=None, mime_type=None):
    template = uri_template
    if not isinstance(template, McpResourceTemplate):
        template = McpResourceTemplate(uri_template, name, read, description, mime_type)
    if find(server.templates, "uri_template", template.uri_template) >= 0:
        raise ValueError("a resource template %s is already registered" % template.uri_template)
    server.templates.append(template)
    _changed(server)
    return template


def remove(server, key, template):
    """Remove the resource at URI `key` (`template`: the template `key`); KeyError if none."""
    load_later(server)
    items = server.templates if template else server.resources
    index = find(items, "uri_template" if template else "uri", key)
    if index < 0:
        raise KeyError(key)
    del items[index]
    if not template:
        for session in server.sessions:
            if key in session.subscriptions:
                session.subscriptions.remove(key)
    _changed(server)


def find_resource(server, uri):
    if not isinstance(uri, str):
        raise InvalidParams("uri must be a string")
    index = find(server.resources, "uri", uri)
    if index >= 0:
        return server.resources[index], None
    for template in server.templates:
        variables = template.match(uri)
        if variables is not None:
            return template, variables
    return None


_LIST_CHANGED = "notifications/resources/list_changed"


def load_later(server):
    """Run add_resources_later's registrations (at the first resources/* request): they
    announce no list change (nobody has seen the list yet)."""
    later = server.later
    if later:
        server.later = []
        quiet = _LIST_CHANGED not in server.announcing
        if quiet:
            server.announcing.append(_LIST_CHANGED)
        try:
            for register in later:
                register(server)
        finally:
            if quiet:
                server.announcing.remove(_LIST_CHANGED)


def _changed(server):
    """One notifications/resources/list_changed per burst, to the clients that initialized."""
    if server.initialized():
        from .notices import announce

        announce(server, _LIST_CHANGED)


def updated(server, session, uri):
    """`uri`, which `session` subscribed to, changed: its notification goes out from a task
    (one per session at a time, each URI once however often it changed meanwhile)."""
    if uri not in session.updated:
        if not session.updated:  # the class's empty tuple until the first
            session.updated = []
        session.updated.append(uri)
        if len(session.updated) == 1:
            asyncio.create_task(_announce_updated(server, session))


async def _announce_updated(server, session):
    while session.updated:
        uri = session.updated.pop(0)
        await server.send(session, ('{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":',
                                     dumps(uri), "}}"))


# -- the requests ------------------------------------------------------------------------


async def request(server, session, id_json, method, params, modern):
    """The frame answering a resources/* request of `session` (`modern`: in revision
    2026-07-28's form, where subscribe and unsubscribe are gone)."""
    load_later(server)
    if method == "resources/read":
        uri = params.get("uri")
        return await read(find_resource(server, uri), uri, id_json, modern)
    if method == "resources/list":
        return server.page(session, id_json, params, server.resources, "uri", _RESOURCES_OPEN, modern)
    if method == "resources/templates/list":
        return server.page(session, id_json, params, server.templates, "uri_template", _TEMPLATES_OPEN,
                            modern)
    uri = params.get("uri")
    if modern and method in ("resources/subscribe", "resources/unsubscribe"):
        # Gone from revision 2026-07-28 (subscriptions/listen replaces them).
        return error_frame(id_json, METHOD_NOT_FOUND, "method not found in 2026-07-28: " + method)
    if method == "resources/subscribe":
        if find_resource(server, uri) is None:
            return not_found_frame(id_json, uri, False)
        subscriptions = session.subscriptions
        if uri not in subscriptions:
            if len(subscriptions) >= MAX_SUBSCRIPTIONS:
                raise InvalidParams("too many subscriptions (at most %d)" % MAX_SUBSCRIPTIONS)
            if not subscriptions:  # the class's empty tuple until the first
                subscriptions = session.subscriptions = []
            subscriptions.append(uri)
        return result_frame(id_json, EMPTY_RESULT)
    if method == "resources/unsubscribe":
        if uri in session.subscriptions:
            session.subscriptions.remove(uri)
        return result_frame(id_json, EMPTY_RESULT)
    return error_frame(id_json, METHOD_NOT_FOUND, "method not found: " + method)
