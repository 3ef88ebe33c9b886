"""The xiaozhi device protocol: the session with a backend and the transports that carry it.

`link` (Link, what every transport shares: hello, envelope, routing, reconnection with
backoff; XiaozhiLink, the WebSocket transport; `opening`, the hellos on a new connection,
loaded for each connection; `control`, the messages besides MCP and an unreadable one's
answer, loaded for such a message), `mqttlink` (MqttLink, the MQTT+UDP transport;
`mqttopening`, both hellos and the audio channel opened, loaded for each session),
`mqttsettings` (an OTA answer's mqtt block checked, for the OTA check and the link as it is
made, loaded for each), `udp` (the MQTT+UDP audio packet: header, sequence rules;
`aesctr`, its cipher, loaded by the first packet encrypted or decrypted). Imports nothing
itself; take what you need."""
