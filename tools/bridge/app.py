"""The device panel as an MCP App (the MCP Apps extension, `io.modelcontextprotocol/ui`).

One panel, two hosts: the HTML served as `ui://umcp/panel` is built, at each read, from
the web console's own files (tools/backend/static/panel.js, form.js, style.css), the view
adapter (static/mcp-app.js) and ext-apps' App class (static/ext-apps-app.js: the pinned
`@modelcontextprotocol/ext-apps` 2.0.4 `app-with-deps.js`, vendored so that a bridge run
from the venv alone serves it; tests/bridge/test_bridge_app.py checks it matches node_modules).

Hosts load an app's HTML into a sandboxed iframe, often with no network and a policy that
allows inline scripts only, so everything is inlined into ONE module script. `bundle()` is
the smallest bundler that does it for these files: each module becomes a function scope
returning its exports; `import {a, b as c} from "./x.js"` becomes a destructuring of x's.
"""

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
PANEL_STATIC = os.path.join(os.path.dirname(HERE), "backend", "static")
APP_STATIC = os.path.join(HERE, "static")
ENTRY = "mcp-app.js"

PANEL_URI = "ui://umcp/panel"
MIME_TYPE = "text/html;profile=mcp-app"  # ext-apps RESOURCE_MIME_TYPE
EXTENSION_ID = "io.modelcontextprotocol/ui"
LEGACY_URI_KEY = "ui/resourceUri"  # ext-apps RESOURCE_URI_META_KEY, for older hosts

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+)";?[ \t]*$', re.M)
_EXPORT_DECL = re.compile(r'^export\s+((?:async\s+)?function\*?|const|let|var|class)\s+([\w$]+)', re.M)
_EXPORT_LIST = re.compile(r'export\s*\{([^}]*)\};?\s*$')


def module_path(name):
    """Where a module the panel document uses lives: ours beside this file, the panel's in
    the web console's static folder."""
    for folder in (APP_STATIC, PANEL_STATIC):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError("no module %s in %s or %s" % (name, APP_STATIC, PANEL_STATIC))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _pairs(clause):
    """'a, b as c' -> [("a", "a"), ("b", "c")] (local name, exported or imported-as name)."""
    pairs = []
    for item in clause.split(","):
        item = item.strip()
        if item:
            local, _, alias = item.partition(" as ")
            pairs.append((local.strip(), (alias or local).strip()))
    return pairs


def _var(name):
    return "__umcp_" + re.sub(r"\W", "_", name)


def bundle(entry=ENTRY, read=None):
    """One script (for a `<script type="module">`) holding `entry` and every module it
    imports by relative path, each run once in dependency order."""
    read = read or (lambda name: _read(module_path(name)))
    done, parts = set(), []

    def add(name, stack=()):
        if name in done:
            return
        if name in stack:
            raise ValueError("import cycle: %s" % " -> ".join(stack + (name,)))
        source = read(name)
        for clause, dependency in _IMPORT.findall(source):
            add(dependency, stack + (name,))

        def imported(match):
            names = ", ".join(local if local == alias else "%s: %s" % (local, alias)
                              for local, alias in _pairs(match.group(1)))
            return "const { %s } = %s;" % (names, _var(match.group(2)))

        body = _IMPORT.sub(imported, source)
        exports = [(local, local) for _, local in _EXPORT_DECL.findall(body)]
        body = _EXPORT_DECL.sub(lambda m: "%s %s" % (m.group(1), m.group(2)), body)
        listed = _EXPORT_LIST.search(body)
        if listed:
            exports += _pairs(listed.group(1))
            body = body[:listed.start()]
        if re.search(r"^\s*(import|export)\b", body, re.M):
            raise ValueError("%s: an import or export the panel bundler does not handle" % name)
        names = ", ".join(local if local == alias else "%s: %s" % (alias, local) for local, alias in exports)
        parts.append("// ---- %s\nconst %s = (() => {\n%s\n;return { %s };\n})();\n" % (name, _var(name), body, names))
        done.add(name)

    add(entry)
    # Inside <script>: no "</script" may appear, and "<\/" means the same in JS strings.
    return "\n".join(parts).replace("</script", "<\\/script").replace("<!--", "<\\!--")


def panel_html():
    """The `ui://umcp/panel` document: the console's stylesheet and panel, inlined."""
    style = _read(os.path.join(PANEL_STATIC, "style.css")).replace("</style", "<\\/style")
    return """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>umcp device panel</title>
<style>
%s
body { margin: 0; padding: 0.5rem; }
</style>
</head>
<body>
<p id="app-status" class="muted" role="status">connecting to the host…</p>
<section id="panel" class="panel" aria-label="device tools"></section>
<script type="module">
%s
</script>
</body>
</html>
""" % (style, bundle())


def tool_meta(visibility=None):
    """A tool's `_meta` pointing at the panel (both the current and the older key)."""
    ui = {"resourceUri": PANEL_URI}
    if visibility:
        ui["visibility"] = list(visibility)
    return {"ui": ui, LEGACY_URI_KEY: PANEL_URI}
