"""Tool names every MCP client accepts: `^[a-zA-Z0-9_-]{1,64}$`.

The specification allows dots (and 128 characters), but Claude Desktop refuses a whole
tool list when one name breaks that pattern, and OpenAI-style function calling (Codex,
Copilot CLI) answers 400. The device's own names keep their dots (the xiaozhi protocol's
`self.audio_speaker.set_volume`); where a client needs the portable form, each character
outside A-Z a-z 0-9 _ - becomes `_` (`self_audio_speaker_set_volume`). For the device's
names only `.` changes, one character for one, so a portable name is as long as the
device's and a page planned from the device's sizes holds it.

This module is the one place of the rule: the device's transports and tools/bridge use it.
Nothing here keeps a per-tool string: the portable form is computed when it is needed.
"""

MAX_PORTABLE = 64  # (no const(): this leaf imports nothing, not even umcp.compat)


def _portable_char(code):
    # A-Z a-z 0-9 _ -
    return (48 <= code <= 57 or 65 <= code <= 90 or 97 <= code <= 122 or code == 95
            or code == 45)


def _codes(text):
    """The UTF-8 bytes of `text` without a copy on MicroPython (a str has a buffer
    there), a copy on CPython."""
    try:
        return memoryview(text)
    except TypeError:
        return text.encode()


def is_portable(name):
    """Whether `name` is 1 to MAX_PORTABLE characters of A-Z a-z 0-9 _ -."""
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_PORTABLE:
        return False
    for code in _codes(name):
        if not _portable_char(code):
            return False
    return True


def portable(name):
    """`name` with every character outside A-Z a-z 0-9 _ - made `_` (not shortened)."""
    if "." in name:
        name = name.replace(".", "_")  # the device's only other character
    for code in _codes(name):
        if not _portable_char(code):  # a name from elsewhere (the bridge's devices)
            return "".join(c if len(c.encode()) == 1 and _portable_char(ord(c)) else "_"
                           for c in name)
    return name


def same(a, b):
    """Whether two names of A-Z a-z 0-9 _ - . have one portable form (`self.a_b` and
    `self_a.b`), compared in place: nothing allocated but two views on MicroPython."""
    if len(a) != len(b):
        return False
    if a == b:
        return True
    codes_a, codes_b = _codes(a), _codes(b)
    if len(codes_a) != len(codes_b):  # a client's name may hold other characters
        return False
    for i in range(len(codes_a)):
        x, y = codes_a[i], codes_b[i]
        if x != y and not ((x == 46 or x == 95) and (y == 46 or y == 95)):  # "." or "_"
            return False
    return True


def index_of(tools, name):
    """The index of the first of `tools` (objects with a `name`) whose name has the
    portable form of `name` (see same()), or -1."""
    for index in range(len(tools)):
        if same(tools[index].name, name):
            return index
    return -1
