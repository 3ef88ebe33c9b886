"""What the local backend and the bridge share: the place devices connect to.

`front` wires it once (DeviceFront): `xiaozhi` serves the xiaozhi WebSocket protocol to
devices and calls their MCP tools; `mqtt` takes the same devices through a broker
(`mqtthub`: the broker, `broker`'s credentials and the server together; `udpaudio`: their
UDP audio), speaking MQTT with the device's own client, lib/unet/mqtt.py; `vision` is the
photo endpoint a device uploads to; `otacheck` the OTA check-in and activation;
`httpserver` runs such an HTTP app on a loopback or LAN port beside the WebSocket server;
`serialboard` takes a board on a serial port (its USB cable) and serves it as a device
over the firmware's serial session, no network."""
