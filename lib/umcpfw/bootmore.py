"""The start's work that only some configs or boards need, loaded by umcpfw.boot (and
umcpfw.configcheck) only for it and dropped again: its names are interned only where it
runs (a name stays on the heap for good). The maker's module's register(), and mcp_http's
check and service.
"""

from umcp.compat import const
from umcpfw import ConfigError, log, log_exception

_AUTHS = const(("token", "none"))


def register_maker(module, server, board, name):
    """The maker's module `module` (imported by umcpfw.boot.add_maker_module as `name`):
    its register(server, board) adds its tools and resources to `server`. An error in
    register() is logged with its traceback, what it added is taken away again, and the
    firmware runs without it. Returns whether it was added."""
    register = getattr(module, "register", None)
    if not callable(register):
        log.error("%s.py has no register(server, board); running without it", name)
        return False
    added = _Added(server)
    try:
        register(added, board)
    except Exception as e:
        log_exception("%s.py's register() failed; running without it" % name, e)
        added.take_away()
        return False
    log.info("%s.py added its tools", name)
    return True


class _Added:
    """The server as the maker's register() sees it: what it adds is noted, so that a
    register() that fails can have it taken away again. Everything else is the server's."""

    def __init__(self, server):
        self._server = server
        self._tools = []
        self._resources = []
        self._templates = []

    def __getattr__(self, name):
        return getattr(self._server, name)

    def add_tool(self, *args, **hints):
        tool = self._server.add_tool(*args, **hints)
        self._tools.append(tool.name)
        return tool

    def add_user_only_tool(self, *args, **hints):
        tool = self._server.add_user_only_tool(*args, **hints)
        self._tools.append(tool.name)
        return tool

    def add_resource(self, *args, **options):
        resource = self._server.add_resource(*args, **options)
        self._resources.append(resource.uri)
        return resource

    def add_resource_template(self, *args, **options):
        template = self._server.add_resource_template(*args, **options)
        self._templates.append(template.uri_template)
        return template

    def take_away(self):
        for name in self._tools:
            self._server.remove_tool(name)
        for uri in self._resources:
            self._server.remove_resource(uri)
        for template in self._templates:
            self._server.remove_resource_template(template)


def mcp_http_service(app, options):
    """The umcpfw.mcphttp service for config.json's `mcp_http` of the Application `app`
    (its server, board, device id and tools built; the settings checked with config.json
    by umcpfw.configcheck). Sets the network host name first (mDNS answers it as
    <hostname>.local once Wi-Fi connects) and get_system_info's mcp_url; "mdns" (true by
    default) has the service answer the `_mcp._tcp` service record, on UDP "mdns_port"
    (5353). (Here, not in umcpfw.mcphttp: this
    code leaves the heap once the service is made, the service stays.)"""
    from umcpfw import mcphttp  # only with mcp_http (heap)

    if options.get("auth") == "none":  # a trusted LAN's choice (Home Assistant sends no token): said at every boot
        log.warning('MCP endpoint without a token ("auth": "none"): anyone on the network can call '
                    "the board's tools")
    token = options.get("token")
    port = options.get("port", 80)
    hostname = options.get("hostname") or mcphttp.hostname_for(app.device_id)
    app.hostname = hostname
    _set_hostname(hostname)
    bind = options.get("bind", "0.0.0.0")
    app.tools.mcp_url = "http://%s.local%s/mcp" % (hostname, "" if port == 80 else ":%d" % port)
    discovery = None
    if options.get("mdns", True):
        # (A function made here would keep this whole module on the heap with it.)
        discovery = mcphttp.Discovery(hostname, options.get("auth", "token"),
                                      mcphttp.address_of(app.board.wlan, bind), bind,
                                      options.get("mdns_port", 5353))
    return mcphttp.McpHttpService(mcphttp.endpoint_maker(app, token, port, bind, hostname, options), bind, port,
                                  discovery=discovery)


def _set_hostname(name):
    """network.hostname(name) where the port has it: DHCP and mDNS take it when Wi-Fi
    connects, which is later (MicroPython applies it at connection)."""
    try:
        import network

        network.hostname(name)
    except (ImportError, AttributeError, OSError, ValueError) as e:
        log.warning("host name %s not set: %r", name, e)


def check_mcp_http(options):
    """config.json's mcp_http (the board's own MCP endpoint, umcpfw.mcphttp), for
    umcpfw.configcheck: ConfigError when its settings cannot work or are at odds (a token
    with "auth": "none")."""
    if not isinstance(options, dict):
        raise ConfigError('config.json: "mcp_http" must be an object like {"port": 80, "token": "..."}')
    auth = options.get("auth", "token")
    token = options.get("token")
    if auth not in _AUTHS:
        raise ConfigError('config.json: "mcp_http" auth must be "token" (the default) or "none", not %r' % (auth,))
    if auth == "none" and token is not None:
        raise ConfigError('config.json: "mcp_http" has "auth": "none" and a "token": keep one of them')
    if auth == "token" and (not isinstance(token, str) or not token):
        raise ConfigError('config.json: "mcp_http" needs a "token" that clients send as '
                          '"Authorization: Bearer <token>", or "auth": "none" on a trusted network')
    port = options.get("port", 80)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
        raise ConfigError('config.json: "mcp_http" port must be 1..65535, not %r' % (port,))
    hostname = options.get("hostname")  # none or empty: the device id's (umcpfw.mcphttp)
    if hostname and not valid_hostname(hostname):
        raise ConfigError('config.json: "mcp_http" hostname %r: 1-32 letters, digits and '
                          '"-" (not first or last)' % (hostname,))
    mdns = options.get("mdns", True)
    if not isinstance(mdns, bool):
        raise ConfigError('config.json: "mcp_http" mdns must be true (the default) or false, not %r' % (mdns,))
    mdns_port = options.get("mdns_port", 5353)
    if not isinstance(mdns_port, int) or isinstance(mdns_port, bool) or not 0 < mdns_port < 65536:
        raise ConfigError('config.json: "mcp_http" mdns_port must be 1..65535, not %r' % (mdns_port,))


def valid_hostname(name):
    """A DNS label of at most 32 characters (MicroPython's limit): letters, digits, '-'."""
    if not isinstance(name, str) or not 1 <= len(name) <= 32 or name[0] == "-" or name[-1] == "-":
        return False
    for c in name:
        if not (c == "-" or ("a" <= c.lower() <= "z") or ("0" <= c <= "9")):
            return False
    return True
