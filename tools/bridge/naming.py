"""The bridge's names for devices, their tools and their resources: every naming rule of
the bridge is here, and only here.

- A device is known by an alias: `--alias ID=NAME`, else `default_alias(id)` (`dev-` and
  the last 3 bytes of its MAC); `unique_alias` settles two devices that would share one.
- Its tools are `ALIAS.NAME` (`tool_name`, `split_tool_name`), at most MAX_TOOL_NAME long.
- Its resources are `umcp://ALIAS/SCHEME/REST` for the device's `SCHEME://REST`
  (`to_bridge_uri`, `from_bridge_uri`); a URI without `://` is `umcp://ALIAS/~/URI`.
- `bridge` is the bridge's own prefix: no device may take it.
"""

import re

BRIDGE = "bridge"  # the bridge's own tools and resources; no device may take this alias
URI_SCHEME = "umcp"
MAX_TOOL_NAME = 128
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


def tool_name(alias, name):
    """The bridge's name of the device tool `name`: ALIAS.NAME, or None when that is over
    MAX_TOOL_NAME characters (the tool is then left out)."""
    full = "%s.%s" % (alias, name)
    return full if len(full) <= MAX_TOOL_NAME else None


def split_tool_name(full):
    """ALIAS.NAME -> (alias, the device's tool name); the name is "" without a dot."""
    alias, _, name = full.partition(".")
    return alias, name


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
