"""A tool made at run time (McpTool: a maker's add_tool(), a board without a tool
catalogue) and ModuleText, a text kept in a module until it is read. How a tool is listed
(its tools/list entry) is umcp.listing's, loaded while tools are made and for each page;
how a call's result is shaped, umcp.result's."""

from .compat import const, forget_modules
from .schema import NO_PROPERTIES, PropertyList

_NO_HINTS = const((None, None, None, None, None))
_SHARED_HINTS = []  # one tuple for each set of hints in use: most tools share a handful


class ModuleText:
    """A tool's description or output schema kept as a global of a module loaded only
    while the text is read, so that a long text only a tools/list entry needs stays off
    the heap in between (a loaded .mpy module's strings are heap objects). Worth it for
    texts of a few hundred bytes. (It lives here, not in umcp.listing, which reads it:
    an object outlives a dropped module, and its class would keep that module's code.)

    :param module: The module holding the text, "package.module".
    :param name: The name of the global that holds it.
    """

    def __init__(self, module, name):
        self.module = module  # "package.module"
        self.name = name

    def read(self):
        """Import the module, read the text and forget the module again.

        :returns: The text.
        """
        module = __import__(self.module, None, None, (self.name,))
        try:
            return getattr(module, self.name)
        finally:
            module = None
            forget_modules(self.module)


class McpTool:
    """A tool a client can list and call: a named, described callback with typed
    parameters. Its tools/list entry is written when a page is, never kept: only its
    size stays on the heap (a tool never changes once made).

    :param name: The tool's name: 1 to 64 characters of A-Z a-z 0-9 _ - and .
    :param description: What it does, for the model: a str; a (template, values) tuple,
                        formatted only when the entry is written (tools made per part
                        share one template); or a ModuleText, read only then.
    :param properties: Its parameters: a PropertyList, a sequence of Property, or None.
    :param callback: ``callback(args)`` gets a dict of every parameter (defaults filled
                     in); a plain or coroutine function, or a umcp.compat.OnDemand. What
                     it returns is the result (a str, a dict, an ImageContent, ...).
    :param user_only: Listed only to a tools/list that asks ``withUserTools``.
    :param title: A title for people (optional); ``read_only``, ``destructive``,
                  ``idempotent`` and ``open_world`` are the MCP annotations' hints.
    :param output_schema: The JSON Schema of an object the callback returns, a dict or
                          its JSON text (kept as text), or a ModuleText: clients of
                          2025-06-18 and later get it, and each result also as
                          ``structuredContent``; the callback must then return a dict.
    :raises ValueError: When the name, the callback or the output schema is not valid.
    """

    output_schema = None  # JSON text; the class's None costs a tool without one no heap
    user_only = False  # these two likewise: set on a tool only where they differ
    hints = None

    def __init__(self, name, description, properties, callback, user_only=False, title=None,
                 read_only=None, destructive=None, idempotent=None, open_world=None,
                 output_schema=None):
        from .toolcheck import check_name  # while tools are made only (umcp.toolcheck)

        check_name(name)
        if properties is not None and not isinstance(properties, PropertyList):
            properties = PropertyList(properties)
        if properties is None or not len(properties):
            properties = NO_PROPERTIES
        if not callable(callback):
            raise ValueError("tool %s: callback is not callable" % name)
        self.name = name
        self.description = description
        self.properties = properties
        self.callback = callback
        if user_only:
            self.user_only = user_only
        # A tuple, not the annotations dict: a third of its heap, and the dict is only
        # wanted while an entry is serialized.
        hints = (title, read_only, destructive, idempotent, open_world)
        if hints == _NO_HINTS:
            hints = None
        elif title is None:  # a title is a tool's own: nothing to share
            for known in _SHARED_HINTS:
                if known == hints:
                    hints = known
                    break
            else:
                _SHARED_HINTS.append(hints)
        if hints is not None:
            self.hints = hints
        from .listing import entry_size, schema_text  # while tools are made only

        if output_schema is not None:
            self.output_schema = schema_text(name, output_schema)
        self.json_bytes = entry_size(self)
