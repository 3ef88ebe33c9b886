"""Where the board connects, from config.json, the settings and what an OTA server gave:
whether a config reaches any server at all (the one rule of the start and the Wi-Fi
setup page), the xiaozhi transport and the link for it, the MCP endpoint links. Loaded
for each (the start, a link built again after a change, a setup page's save) and dropped
again: umcpfw.boot's other work is not needed then, and neither is this in between."""

from umcp.compat import OnDemand, const
from umcpfw import ConfigError

# Optional config.json keys handed to the link as they are (timings in seconds): to both
# transports, then to the WebSocket one only, then to the MQTT one only.
_LINK_OPTIONS = const(("hello_timeout", "idle_timeout", "backoff_min", "backoff_max", "stable_after"))
_WEBSOCKET_OPTIONS = const(("protocol_version", "ping_interval"))
_MQTT_OPTIONS = const(("keepalive",))


def missing(config, provisioned):
    """What `config` lacks to reach any server, with `provisioned` (the server URL and token
    an OTA server gave earlier: the settings'): None when it has a way (an OTA URL, a
    WebSocket URL and its token, an MCP endpoint, the board's own HTTP endpoint);
    "token" for a URL without its token; else "server"."""
    if config.get("ota_url") or config.get("mcp_endpoint") or config.get("mcp_http") is not None:
        return None
    url = config.get("url") or provisioned[0]
    if url and (config.get("token") or provisioned[1]):
        return None
    return "token" if url else "server"


def transport(app):
    """{"websocket": {url, token}} or {"mqtt": {...}}: what the OTA server gave last
    (saved), else config.json's url and token, else a provisioned server_url/token."""
    config = app.config
    if app.ota is not None:
        saved = app.ota.saved_transport()
        if saved:
            return saved
    url = config.get("url") or app.settings.get("server_url")
    token = config.get("token") or app.settings.get("token")
    if url and token:
        return {"websocket": {"url": url, "token": token}}
    if app.ota is not None:
        raise ValueError("the OTA server at %s gave no websocket or mqtt settings yet"
                         % config["ota_url"])
    raise ValueError("config.json needs ota_url, or the server's url and token")


def build_link(app):
    """The link for transport(); the application only uses run(), stop(), connected. With
    a status screen, a turn's text goes to it (umcpfw.turntext, loaded for each)."""
    link = _build(app)
    if app.status_view is not None:
        link.on_turn = OnDemand("umcpfw.turntext", "take", app.status_view)
    return link


def _build(app):
    config = app.config
    where = transport(app)
    options = {"ca": app.trust, "max_message": app.max_message or app.message_limit,
               "on_system": OnDemand("umcpfw.orders", "on_system", app),
               "on_alert": OnDemand("umcpfw.orders", "on_alert", app)}
    for key in _LINK_OPTIONS:
        if key in config:
            options[key] = config[key]
    if "mqtt" in where:
        from xiaozhi.mqttlink import MqttLink  # imported only when used (heap)

        for key in _MQTT_OPTIONS:
            if key in config:
                options[key] = config[key]
        return MqttLink(app.server, where["mqtt"], app.device_id, app.client_id, **options)
    from xiaozhi.link import XiaozhiLink

    websocket = where["websocket"]
    for key in _WEBSOCKET_OPTIONS:
        if key in config:
            options[key] = config[key]
    if isinstance(websocket.get("version"), int) and "protocol_version" not in config:
        options["protocol_version"] = websocket["version"]
    return XiaozhiLink(app.server, websocket["url"], websocket.get("token") or "",
                       app.device_id, app.client_id, **options)


def add_endpoints(app):
    """The MCP endpoint links config.json's mcp_endpoint names (mcplink.endpoint), added
    to the services of the Application `app`, which makes them once umcpfw.boot's code has
    left the heap: they stay as long as the board runs, and are made where the heap is low.
    ConfigError says what is wrong, the token masked."""
    import gc

    gc.collect()  # the start's garbage first: the links' objects stay, packed into its room
    try:
        links = endpoint_links(app.config, app.server, app.device_id, "umcp/%s (%s)"
                               % (app.version, app.board.name), app.trust, app.server.max_message)
    except ValueError as e:  # its words mask the token
        raise ConfigError("config.json: %s" % e)
    catalogue = app.server.catalogue
    for link in links:
        link.on_starved = app.starved
        # A choice of tools that one of the catalogue's page forms lists gets its pages
        # from the file, as a backend does: no paging code loaded at its first tools/list.
        link.mcp.sees = catalogue_form(catalogue, link.mcp.offered)
    app.endpoints = links
    app.services[:0] = links  # before the HTTP endpoint's service, as config.json lists them
    app.tools.endpoints = links  # get_system_info reports them


# Optional config.json keys handed to each link as they are (seconds), as to the xiaozhi
# link; hello_timeout bounds the connection and its upgrade.
_ENDPOINT_OPTIONS = const(("idle_timeout", "ping_interval", "backoff_min", "backoff_max", "stable_after"))


def endpoint_links(config, server, device_id, user_agent, ca, max_message):
    """The links config.json asks for: one per URL of its mcp_endpoint (a URL, or a list
    of them, one per agent), with the tools its links.endpoint.tools offers (or
    mcp_endpoint_tools, its older name) and the timings it names; ValueError saying what
    is wrong, the token masked. Here, not in mcplink.endpoint, which stays resident: it
    runs once, at the start."""
    from mcplink.endpoint import EndpointLink, masked

    urls = config["mcp_endpoint"]
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list):
        raise ValueError("mcp_endpoint must be a ws:// or wss:// URL, or a list of them")
    choice = ((config.get("links") or {}).get("endpoint") or {}).get("tools")
    options = {"tools": config.get("mcp_endpoint_tools") if choice is None else choice,
               "connect_timeout": config.get("hello_timeout", 10)}
    for key in _ENDPOINT_OPTIONS:
        if key in config:
            options[key] = config[key]
    links = []
    for url in urls:
        # One agent's endpoint takes one connection: a second would push the first off.
        if urls.count(url) > 1:
            raise ValueError("mcp_endpoint lists %s twice" % masked(url))
        links.append(EndpointLink(server, url, device_id, user_agent, ca, max_message, **options))
    return links


def catalogue_form(catalogue, offered):
    """Which of the page forms of `catalogue` (umcp.catalogue, or None) lists exactly the
    tools `offered(tool)` picks out of it (Session.sees): True, the one with the user-only
    tools (all are offered); False, the one without (all but those); None: neither."""
    if catalogue is None:
        return None
    from umcp.catalogue import CatalogueTool

    every = plain = True  # every tool offered; exactly those not user-only
    with open(catalogue.path, "rb") as f:
        for index in range(catalogue.count):
            record = catalogue.record(index, f)
            tool = CatalogueTool(record[0], record[1], None, None)
            if offered(tool):
                plain = plain and not tool.user_only
            else:
                every = False
                plain = plain and tool.user_only
    return True if every else False if plain else None
