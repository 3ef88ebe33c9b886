"""The tool budget: which tools no client sees (McpServer.set_hidden). config.json's
"tools": {"hide": [...]} hides tools on every transport; the user-only tool
self.tools.set_enabled shows or hides them at run time, its choices kept in the settings
(SETTING). A pattern is a tool name or a prefix ending in "*" (or ".", the older form of
mcp_endpoint_tools); the last rule that matches a tool decides: the hide list first, then
the choices in the order made. self.tools.set_enabled itself is never hidden.
Loaded at boot where config.json has "tools" or the settings hold choices, for each call
of the tool, and for configcheck's check of "tools" and "links"; the rule it installs
(umcpfw.toolrule) is all that stays while tools are hidden. `tools` is the board's CommonTools."""

from umcp import InvalidParams
from umcp.compat import call_then_forget, forget_modules
from umcpfw import ConfigError

SETTING = "tool_choices"  # [[pattern, enabled], ...] in the order made
MAX_CHOICES = 32
MAX_PATTERN = 64


def valid(pattern):
    """Whether `pattern` is a tool name or a prefix ending in "*" (no other "*")."""
    return isinstance(pattern, str) and 0 < len(pattern) <= MAX_PATTERN and "*" not in pattern[:-1]


def _rule(hide, choices):
    """umcpfw.toolrule's rule, its module forgotten: only the rule keeps its code."""
    return call_then_forget("umcpfw.toolrule", "rule", hide, choices)


def install_rule(tools, options):
    """At boot: config.json's "tools" `options` (its hide list kept on `tools` for the
    tool's calls) and the choices in the settings, as the server's rule."""
    tools.hide = hide = (options or {}).get("hide") or ()
    tools.server.set_hidden(_rule(hide, tools.settings.get(SETTING) or ()))


def _covers(pattern, other):
    """Whether every tool `other` matches, `pattern` matches too."""
    if pattern[-1] in "*.":
        return other.startswith(pattern[:-1] if pattern[-1] == "*" else pattern)
    return pattern == other


def set_enabled(tools, args):
    """self.tools.set_enabled: show (`enabled` true) or hide the tools `name` matches,
    from now on and after a restart; every client hears that the list changed."""
    pattern, enabled = args["name"], args["enabled"]
    if not valid(pattern):
        raise InvalidParams('name must be a tool name or a prefix ending in "*" (at most %d '
                            'characters), not %r' % (MAX_PATTERN, pattern))
    choices = [choice for choice in tools.settings.get(SETTING) or () if not _covers(pattern, choice[0])]
    if len(choices) >= MAX_CHOICES:
        raise InvalidParams("more than %d tool choices: show or hide a wider pattern" % MAX_CHOICES)
    choices.append([pattern, enabled])
    tools.settings.set(SETTING, choices)
    tools.server.set_hidden(_rule(getattr(tools, "hide", ()), choices))
    forget_modules("umcp.registry")  # the server's code that set_hidden loaded, for this once
    return {"name": pattern, "enabled": enabled}


def _object(where, value, keys, like):
    """A part of config.json that is an object of `keys` only."""
    if not isinstance(value, dict):
        raise ConfigError('config.json: %s must be an object like %s, not %r' % (where, like, value))
    for key in value:
        if key not in keys:
            raise ConfigError('config.json: %s has no "%s" (it takes %s)'
                              % (where, key, ", ".join('"%s"' % k for k in keys)))


def _patterns(where, value):
    """A list of tool names and of prefixes ending in "*" (or ".": mcp_endpoint_tools')."""
    if not isinstance(value, list):
        raise ConfigError('config.json: %s must be a list of tool names or prefixes ending in "*", '
                          'not %r' % (where, value))
    for pattern in value:
        if not valid(pattern):
            raise ConfigError('config.json: %s: %r is no tool name nor a prefix ending in "*"'
                              % (where, pattern))


def check(config, key, options):
    """umcpfw.configcheck's check of config.json's "tools" ({"hide": [pattern, ...]}) or
    "links" ({"endpoint": {"tools": [pattern, ...]}}: the tools a link offers,
    mcplink.endpoint): ConfigError for the first mistake. (Named as configcheck's own: no
    name of its own interned.)"""
    if key == "links":
        _check_links(config, options)
        return
    _object('"tools"', options, ("hide",), '{"hide": ["self.screen.*"]}')
    if "hide" in options:
        _patterns('"tools" hide', options["hide"])


def _check_links(config, options):
    _object('"links"', options, ("endpoint",), '{"endpoint": {"tools": ["self.lamp.*"]}}')
    endpoint = options.get("endpoint")
    if endpoint is None:
        return
    _object('"links" endpoint', endpoint, ("tools",), '{"tools": ["self.lamp.*"]}')
    if "tools" in endpoint:
        _patterns('"links" endpoint tools', endpoint["tools"])
        if config.get("mcp_endpoint_tools") is not None:
            raise ConfigError('config.json: "links" endpoint tools and "mcp_endpoint_tools" (its '
                              'older name) are both set: keep one of them')
