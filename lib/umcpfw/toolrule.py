"""The rule of hidden tools that umcpfw.toolbudget makes (McpServer.set_hidden): config.json's
hide list and self.tools.set_enabled's choices, the last that matches a tool deciding;
self.tools.set_enabled itself is never hidden. Apart from umcpfw.toolbudget so that, while
tools are hidden, only this stays on the heap."""

SET_ENABLED = "self.tools.set_enabled"


class Hidden:
    """hidden(name) -> bool for McpServer.set_hidden: `rules` are (prefix or name, is a
    prefix, enabled), the last that matches deciding. Sliced once, so that a listing
    allocates nothing per tool."""

    def __init__(self, rules):
        self.rules = rules

    def __call__(self, name):
        if name == SET_ENABLED:
            return False
        verdict = False
        for text, prefix, enabled in self.rules:
            if name == text or prefix and name.startswith(text):
                verdict = not enabled
        return verdict


def _entry(pattern, enabled):
    prefix = pattern[-1] in "*."
    return (pattern[:-1] if pattern[-1] == "*" else pattern, prefix, enabled)


def rule(hide, choices):
    """The Hidden of config.json's `hide` list and the run-time `choices`, or None when
    they hide nothing."""
    rules = [_entry(pattern, False) for pattern in hide]
    rules.extend(_entry(pattern, enabled) for pattern, enabled in choices)
    for _, _, enabled in rules:
        if not enabled:
            return Hidden(rules)
    return None
