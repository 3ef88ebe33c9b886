"""Host programs (CPython): `sim` (the simulated board, make sim), `backend` (the local
backend), `bridge` (devices to MCP clients), `hub` (what backend and bridge share), `board`
(deploy, flash, repl), `bench` (make bench), `mpy` (device code inside MicroPython); `cli`
(the installed `umcp` command over them), `paths` (where the device's files are, in a clone
or installed), `devicelib` (lib/ on sys.path), `childprocess` (child processes started
and stopped one way). Installed, this package is `umcp_host`
(pyproject.toml); in a clone, `tools`. docs/DESIGN.md has the map."""
