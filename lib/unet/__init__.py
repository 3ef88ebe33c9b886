"""Network clients for the device: `conn` (URLs, TCP/TLS streams, HTTP heads),
`tlscontext` (CA certificates and TLS client contexts, loaded by the first TLS connection
or Trust with certificates), `http` (multipart and JSON POST), `download` (the streamed GET), `httpcore` (what
those two share), `ws`
(WebSocket; `wshandshake`, its opening handshake, loaded per connection), `mqtt` (MQTT 3.1.1), `roots` (the CA roots TLS trusts by default, imported
by tlscontext only for a verified connection), `reconnect` (what every link that
reconnects shares); and one server, `httpd` (a small HTTP/1.1 server: the board's HTTP
MCP endpoint is one handler of it; `httpdrefusal`, the requests it refuses itself, loaded
at the first). Import the module you need; this file imports nothing,
so a board loads only what it uses."""
