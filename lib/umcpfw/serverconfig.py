# Whether a config.json reaches a server: the one rule for the start (umcpfw.boot refuses
# a config that does not) and the Wi-Fi setup page (umcpfw.wifisetup saves none). Loaded
# by each for the check and dropped again.


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
