"""Network clients for the device: `conn` (URLs, TCP/TLS streams, HTTP heads),
`http` (streamed GET and multipart POST), `ws` (WebSocket). Import the module you
need; this file imports nothing, so a board loads only what it uses."""
