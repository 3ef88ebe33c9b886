"""Network clients for the device: `conn` (URLs, TCP/TLS streams, HTTP heads),
`http` (streamed GET and multipart POST), `ws` (WebSocket), `roots` (the CA roots TLS
trusts by default, imported by conn only for a verified connection). Import the module you
need; this file imports nothing, so a board loads only what it uses."""
