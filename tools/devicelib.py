"""Device code on the host: importing this module puts lib/ (tools.paths.LIB: the clone's,
or the copy shipped inside the installed package) on sys.path, last, so it shadows nothing
installed, and the device's own modules import as they do on the board. Host tools that
use them (tools.hub speaks MQTT with lib/unet/mqtt.py; the benches run the MCP core and
the links) import it first."""

import sys

from .paths import LIB

if LIB not in sys.path:
    sys.path.append(LIB)
