"""The checks of an OTA answer's mqtt block, apart from the MQTT link: the OTA check refuses
a block the link could not use without loading the link (its client, the audio channel),
and the link reads its broker's address with them as it is made. Loaded for each and
dropped after (umcp.compat.call_then_forget)."""

TLS_PORT = 8883  # the reference's port when the endpoint names none


def parse_endpoint(endpoint):
    """(host, port) of "host" or "host:port"; ValueError if unusable."""
    if not isinstance(endpoint, str) or not endpoint:
        raise ValueError("mqtt endpoint missing")
    host, port = endpoint, TLS_PORT
    colon = endpoint.rfind(":")
    if colon >= 0:
        host = endpoint[:colon]
        try:
            port = int(endpoint[colon + 1:])
        except ValueError:
            raise ValueError("mqtt endpoint %r: bad port" % endpoint)
        if not 0 < port < 65536:
            raise ValueError("mqtt endpoint %r: bad port" % endpoint)
    if not host:
        raise ValueError("mqtt endpoint %r: no host" % endpoint)
    return host, port


def check_settings(mqtt):
    """Refuse (ValueError) an mqtt block the link cannot use; else its broker's (host, port)."""
    if not isinstance(mqtt, dict):
        raise ValueError("mqtt settings must be an object")
    where = parse_endpoint(mqtt.get("endpoint"))
    for key in ("client_id", "publish_topic"):
        if not isinstance(mqtt.get(key), str) or not mqtt[key]:
            raise ValueError("mqtt %s missing" % key)
    for key in ("username", "password", "subscribe_topic"):
        if mqtt.get(key) is not None and not isinstance(mqtt[key], str):
            raise ValueError("mqtt %s must be a string" % key)
    keepalive = mqtt.get("keepalive", 240)
    if not isinstance(keepalive, int) or not 0 <= keepalive <= 65535:
        raise ValueError("mqtt keepalive must be 0..65535 seconds")
    return where
