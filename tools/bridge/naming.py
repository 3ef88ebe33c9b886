"""The bridge's names for devices, their tools and their resources: every naming rule of
the bridge is here, and only here (docs/bridge.md, "What clients see").

- A device is known by an alias: `--alias ID=NAME`, else `default_alias(id)` (`dev-` and
  the last 3 bytes of its MAC); `unique_alias` settles two devices that would share one.
- Its tools are `ALIAS__NAME`, NAME the device's name without `self.` in the portable form
  every MCP client accepts (umcp.names): `kitchen__audio_speaker_set_volume`. `ToolNames`
  names every known device's tools at once and maps a called name back; a name two tools
  would share, one too long or one of the bridge's own is cut and given `_` and 6 hex
  digits of SHA-1 of `ALIAS.NAME` (`_suffixed`), so that no tool is ever left out.
- Its resources are `umcp://ALIAS/SCHEME/REST` for the device's `SCHEME://REST`
  (`to_bridge_uri`, `from_bridge_uri`); a URI without `://` is `umcp://ALIAS/~/URI`.
- `bridge` is the bridge's own prefix: no device may take it. Its own tools follow the
  rule as well: `bridge__list_devices`, `bridge__show_panel`, `bridge__device_tools`.
"""

import hashlib
import re

from .. import devicelib  # noqa: F401 (lib/ on sys.path: umcp.names, the rule the device uses too)
from umcp.names import MAX_PORTABLE, portable  # noqa: E402

BRIDGE = "bridge"  # the bridge's own tools and resources; no device may take this alias
URI_SCHEME = "umcp"
MAX_TOOL_NAME = MAX_PORTABLE  # 64
SEPARATOR = "__"  # between the alias and the tool's own name
_DEVICE_PREFIX = "self."  # the xiaozhi protocol's namespace of device tools
_SUFFIX_DIGITS = 6
_ALIAS = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
_MAC = re.compile(r"^[0-9A-Fa-f]{2}([:-]?[0-9A-Fa-f]{2}){5}$")


def default_alias(device_id):
    """`dev-ddeeff` for a MAC `aa:bb:cc:dd:ee:ff`; other ids made name-safe."""
    if _MAC.match(device_id):
        return "dev-" + re.sub(r"[^0-9A-Fa-f]", "", device_id)[-6:].lower()
    return re.sub(r"[^A-Za-z0-9_-]", "-", device_id)[:48] or "dev"


def parse_aliases(pairs):
    """["aa:bb:cc:dd:ee:ff=kitchen", ...] -> {device id: alias}; ValueError on a bad one."""
    aliases = {}
    for pair in pairs or ():
        device_id, sep, alias = pair.rpartition("=")
        if not sep or not device_id:
            raise ValueError("--alias wants DEVICE_ID=NAME, got %r" % pair)
        if not _ALIAS.match(alias) or alias == BRIDGE:
            raise ValueError("alias %r: 1-48 characters of A-Za-z0-9_- (and not %r)" % (alias, BRIDGE))
        aliases[device_id] = alias
    if len(set(aliases.values())) != len(aliases):
        raise ValueError("two devices share an alias: %s" % pairs)
    return aliases


def unique_alias(device_id, alias, taken):
    """`alias` for a newly seen device, unless `taken` (a set, `bridge` included) has it:
    then the whole id made name-safe (two MACs ending alike), with `_` until it is free."""
    if alias not in taken:
        return alias
    alias = re.sub(r"[^A-Za-z0-9_-]", "", device_id)[:48] or "dev"
    while alias in taken:
        alias += "_"
    return alias


def own_tool(name):
    """One of the bridge's own tools: bridge__NAME."""
    return BRIDGE + SEPARATOR + name


def tool_name(alias, name):
    """The plain name of the device tool `name` on `alias` (ToolNames decides when it
    needs a suffix): ALIAS__NAME, without `self.`, in the portable form (not shortened)."""
    if name.startswith(_DEVICE_PREFIX) and len(name) > len(_DEVICE_PREFIX):
        name = name[len(_DEVICE_PREFIX):]
    return alias + SEPARATOR + portable(name)


def _suffixed(plain, alias, name, digits=_SUFFIX_DIGITS):
    """`plain` cut to leave room for `_` and `digits` hex digits of SHA-1 of ALIAS.NAME."""
    digest = hashlib.sha1(("%s.%s" % (alias, name)).encode()).hexdigest()[:digits]
    return plain[:MAX_TOOL_NAME - 1 - digits] + "_" + digest


class ToolNames:
    """The names of every known device's tools at once (the bridge's own reserved).

    `entries`: (alias, the device's tool name) pairs, of every device seen (online or not:
    a device's names stay while it is away). Each gets tool_name(), unless that is over 64
    characters, reserved, or shared with another entry: then _suffixed() (longer digits in
    the unlikely case the suffixed name is taken). Decided in sorted order, so the same
    tools always get the same names."""

    def __init__(self, entries, reserved=()):
        self.names = {}  # the bridge's name -> (alias, the device's name)
        self.of = {}  # (alias, the device's name) -> the bridge's name
        taken = set(reserved)
        entries = sorted(set(entries))
        plain = {entry: tool_name(*entry) for entry in entries}
        count = {}
        for name in plain.values():
            count[name] = count.get(name, 0) + 1
        later = []
        for entry in entries:
            name = plain[entry]
            if len(name) <= MAX_TOOL_NAME and count[name] == 1 and name not in taken:
                self._give(entry, name, taken)
            else:
                later.append(entry)
        for entry in later:  # after every plain name: a suffixed name never takes one
            digits = _SUFFIX_DIGITS
            name = _suffixed(plain[entry], *entry, digits=digits)
            while name in taken:
                digits += 2
                name = _suffixed(plain[entry], *entry, digits=digits)
            self._give(entry, name, taken)

    def _give(self, entry, name, taken):
        taken.add(name)
        self.names[name] = entry
        self.of[entry] = name

    def find(self, name):
        """(alias, the device's tool name) for one of the names given, else None."""
        return self.names.get(name)


def guess_alias(name):
    """The alias part of what looks like a device tool's name (for error messages)."""
    alias, sep, _ = name.partition(SEPARATOR)
    return alias if sep else None


def to_bridge_uri(alias, uri):
    """device://status on `kitchen` -> umcp://kitchen/device/status (templates too)."""
    scheme, sep, rest = uri.partition("://")
    if sep and re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", scheme):
        return "%s://%s/%s/%s" % (URI_SCHEME, alias, scheme, rest)
    return "%s://%s/~/%s" % (URI_SCHEME, alias, uri)


def from_bridge_uri(uri):
    """The inverse of to_bridge_uri: (alias, device uri), or None if it is not one of ours."""
    prefix = URI_SCHEME + "://"
    if not uri.startswith(prefix):
        return None
    alias, _, rest = uri[len(prefix):].partition("/")
    scheme, sep, tail = rest.partition("/")
    if not alias or not sep or not scheme:
        return None
    return alias, (tail if scheme == "~" else "%s://%s" % (scheme, tail))
