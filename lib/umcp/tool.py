"""A tool made at run time (McpTool: a maker's add_tool(), a board without a tool
catalogue) and ModuleText, a text kept in a module until it is read. How a tool is listed
(its tools/list entry) is umcp.listing's, loaded while tools are made and for each page;
how a call's result is shaped, umcp.result's."""

from .compat import const, forget_modules
from .schema import NO_PROPERTIES, PropertyList

_NO_HINTS = const((None, None, None, None, None))
_SHARED_HINTS = []  # one tuple for each set of hints in use: most tools share a handful


class ModuleText:
    """A tool's description or output schema kept as a global of a module that is loaded
    only while the text is read (read(): imported, read, dropped again on MicroPython):
    a .mpy module's string constants are heap objects for as long as it is loaded, so
    long texts that only a tools/list entry needs stay off the heap in between. Worth
    it for texts of a few hundred bytes (the object itself takes about 40). (Here, not in
    umcp.listing, which reads them: an object outlives the module that is dropped, and
    its class would keep that module's code on the heap.)"""

    def __init__(self, module, name):
        self.module = module  # "package.module"
        self.name = name

    def read(self):
        module = __import__(self.module, None, None, (self.name,))
        try:
            return getattr(module, self.name)
        finally:
            module = None
            forget_modules(self.module)


class McpTool:
    """A named, described callback with typed parameters.

    `callback(args)` gets a dict holding every declared property (defaults filled
    in); it may be a plain or a coroutine function. Its tools/list entry is
    serialized when a page is built, not kept: the description is the one string
    the caller gave (in flash, when frozen), and only the entry's size stays on the
    heap (tools never change after construction, so the size holds).

    `description` may also be a (template, values) tuple, formatted (`template % values`)
    only when the entry is serialized: tools made per part or per instance then share one
    template and keep no formatted string on the heap; or a ModuleText, read
    only when the entry is serialized.

    `output_schema`: the JSON Schema (an object's) of what the callback returns, as a
    dict or as its JSON text (kept as text: a literal is in flash when frozen, and a
    str takes less heap than the dicts). Clients of 2025-06-18 and later then get it
    in the entry, and each result also as `structuredContent`; the callback must
    return a dict. A ModuleText (its text checked here) is kept as it is.
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
