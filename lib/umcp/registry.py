"""McpServer's registration methods: tools and resources added and removed, tools hidden,
the vision callback, a resource looked up by URI. A connected device seldom calls them
(its tools are made at the start, or read from its catalogue), so they are not the
server's resident code: McpServer.__getattr__ loads this module at the first of them and
binds each function here to the server as a method (`server.add_tool(...)` calls
`add_tool(server, ...)`). The module stays loaded: the application forgets it once its
start has made the tools (umcpfw.app). Each function's docstring is its method's.

Every name this module defines without a leading underscore is a method of McpServer,
and it imports only inside its functions: a name imported at its top would be one too.
Reaches the server through its public names (umcp.server's docstring)."""


def add_tool(server, tool, description=None, properties=None, callback=None, **hints):
    """Register a tool that clients can list and call.

    :param tool: An McpTool, or the new tool's name: the tool is then built from
                 this call's arguments, which are McpTool's.
    :param description: The tool's description (when ``tool`` is a name).
    :param properties: Its parameters, a PropertyList or a sequence of Property.
    :param callback: ``callback(args)``, plain or coroutine function (see McpTool).
    :param hints: McpTool's keyword arguments (``user_only``, ``title``, ...).
    :returns: The registered McpTool.
    :raises ValueError: When the tool is not valid or its name is already taken.
    """
    from .tool import McpTool  # where tools are made at run time only (umcp.tool)

    if not isinstance(tool, McpTool):
        tool = McpTool(tool, description, properties, callback, **hints)
    from .toolcheck import check_unique  # while tools are made only (umcp.toolcheck)

    check_unique(server, tool.name)
    server.tools.append(tool)
    _tools_changed(server)
    return tool


def add_user_only_tool(server, name, description, properties, callback, **hints):
    """Register a tool for the user's console only: it is listed to a client only
    when its tools/list asks ``withUserTools``, and a model never sees it.

    The arguments are those of ``add_tool()`` with a name.

    :returns: The registered McpTool.
    :raises ValueError: As ``add_tool()``.
    """
    from .tool import McpTool

    return add_tool(server, McpTool(name, description, properties, callback, user_only=True, **hints))


def remove_tool(server, name):
    """Remove a tool; initialized clients hear that the list changed.

    :param name: The tool's name, or its portable form (a catalogue's tool is skipped
                 from then on).
    :raises KeyError: When no tool has that name.
    """
    from .names import index_of
    from .rpc import find

    index = find(server.tools, "name", name)
    if index < 0:
        index = index_of(server.tools, name)
    if index >= 0:
        del server.tools[index]
    else:
        catalogue = server.catalogue  # its file stays as written: the tool is skipped
        record = None if catalogue is None else catalogue.find(name)
        if record is None:
            raise KeyError(name)
        catalogue.removed += (record[0],)
    _tools_changed(server)


def set_hidden(server, hidden):
    """Hide tools from every client (absent from tools/list, a call refused as one
    of an unknown tool); initialized clients hear that the list changed.

    :param hidden: ``hidden(name) -> bool``, or None: every tool shown.
    """
    server.hidden = hidden
    _tools_changed(server)


def _tools_changed(server):
    if server.initialized():  # only they hear of it: at the start, nobody has
        from .notices import announce

        announce(server, "notifications/tools/list_changed")


# Resources: umcp.resource holds their code, imported at the first resource or
# resources/* request, so a device without any pays nothing for it.


def add_resource(server, uri, name=None, read=None, description=None, mime_type=None):
    """Register a resource at a fixed URI.

    :param uri: An McpResource, or the new resource's URI: the resource is then
                built from this call's arguments, which are McpResource's.
    :param name: Its name, as resources/list shows it.
    :param read: ``read()``, plain or coroutine function, returns the contents: a
                 str (text), a bytes-like object (a blob) or a dict or list (JSON).
    :param description: A description for clients (optional).
    :param mime_type: The contents' MIME type (optional).
    :returns: The registered McpResource.
    :raises ValueError: When the URI or another argument is not valid, or a
                        resource at that URI is already registered.
    """
    from .resource import add_resource

    return add_resource(server, uri, name, read, description, mime_type)


def add_resource_template(server, uri_template, name=None, read=None, description=None, mime_type=None):
    """Register resources whose URIs fit a template, such as
    ``device://sensor/{id}`` (RFC 6570, level 1).

    :param uri_template: An McpResourceTemplate, or the template.
    :param name: Its name, as resources/templates/list shows it.
    :param read: ``read(variables)`` gets a dict of the variables' values and
                 returns contents as ``add_resource()``'s ``read()`` does; raising
                 KeyError means there is no such resource.
    :param description: A description for clients (optional).
    :param mime_type: The contents' MIME type (optional).
    :returns: The registered McpResourceTemplate.
    :raises ValueError: When the template or another argument is not valid.
    """
    from .resource import add_template

    return add_template(server, uri_template, name, read, description, mime_type)


def remove_resource(server, uri):
    """Remove the resource at ``uri``.

    :raises KeyError: When there is none.
    """
    from .resource import remove

    remove(server, uri, False)


def remove_resource_template(server, uri_template):
    """Remove the resource template ``uri_template``.

    :raises KeyError: When there is none.
    """
    from .resource import remove

    remove(server, uri_template, True)


def find_resource(server, uri):
    """(the resource or template serving `uri`, the template's variables or None), or
    None when none does; InvalidParams when `uri` is not a string."""
    from .resource import find_resource

    return find_resource(server, uri)


def on_vision(server, fn):
    """Register the function that receives the vision endpoint a client's initialize
    request offers (xiaozhi's capabilities.vision). Usable as a decorator.

    :param fn: ``fn(url, token)``.
    :returns: ``fn``.
    """
    server.vision = fn
    return fn
