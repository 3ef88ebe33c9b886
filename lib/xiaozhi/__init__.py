"""The xiaozhi device protocol: the session with a backend and the transports that
carry it (`link`: WebSocket). Imports nothing itself; take what you need."""
