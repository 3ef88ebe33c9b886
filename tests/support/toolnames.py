"""The tool-name rule of the clients people use, held against every name a server lists.

Claude Desktop validates each tool name against `^[a-zA-Z0-9_-]{1,64}$` and refuses the
whole list over one that breaks it (`tools.N.FrontendRemoteMcpToolDefinition.name: String
should match pattern ...`); OpenAI-style function names, Codex and Copilot CLI answer 400
for the same. The specification allows more (dots, 128 characters), and neither the SDK, the
Inspector nor the conformance suite checks this: these tests do."""

import re

CLIENT_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def check_tool_names(names):
    """Every name matches the clients' pattern, and none is listed twice; returns them."""
    names = list(names)
    bad = [name for name in names if not CLIENT_TOOL_NAME.match(name)]
    assert not bad, "tool names clients refuse: %s" % bad
    assert len(names) == len(set(names)), "a tool name listed twice: %s" % sorted(names)
    return names
