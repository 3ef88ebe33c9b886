"""What the local backend and the bridge share: the place devices connect to.

`xiaozhi` serves the xiaozhi WebSocket protocol to devices and calls their MCP tools;
`vision` is the photo endpoint a device uploads to; `httpserver` runs such an HTTP
app on a loopback or LAN port beside the WebSocket server."""
