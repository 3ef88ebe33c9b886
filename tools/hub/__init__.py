"""What the local backend and the bridge share: the place devices connect to.

`xiaozhi` serves the xiaozhi WebSocket protocol to devices and calls their MCP tools;
`mqtt` takes devices through an MQTT broker (and their UDP channel) as the same Device
objects; `broker` issues MQTT credentials and runs or configures the broker that checks
them (embedded amqtt, mosquitto files); `mqttclient` is the hub's small MQTT client; `ota`
serves the xiaozhi OTA check and activation; `vision` is the photo endpoint a device
uploads to; `httpserver` runs such an HTTP app on a loopback or LAN port beside the
WebSocket server."""
