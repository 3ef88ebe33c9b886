"""What the host tests share (imported as tests.support.<module>; none of it runs on the
device). docs/DESIGN.md's map names every module with what it is for; the main ones:
`mcpwire` (a client's end of an McpServer that validates all it sends), `firmwareharness`
(the firmware against a scripted backend), `endpointharness`, `mqttharness`,
`otacheckserver` (scripted peers), `fakedevice`, `mqttdevice` (scripted devices),
`brokers` (real MQTT brokers), `webharness` and `wifisetupharness` (the browser tests),
`serialrig` (the serial-line boards' rig), `mpyclients` (client scripts run under MicroPython).

The helpers the portable cases share with the host tests (esp_image, ChunkStream, Wire) are
not here: they run inside MicroPython too, beside those cases.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
