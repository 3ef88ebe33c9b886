"""What the host tests share (imported as tests.support.<module>; none of it runs on the device).

- `mcpwire`: McpWire, a client's end of an McpServer that validates all it sends.
- `firmwareharness`: the firmware against a scripted backend (Sim: a tools.sim.board
  SimBoard with the tests' defaults; Backend, device_session, the runtimes, certificates,
  HTTP, image and vision servers).
- `endpointharness`: the assistant's side of an MCP endpoint, scripted.
- `fakedevice`: a scripted device with resources, for the bridge.
- `wiretap`: run as a script, it logs every line a stdio MCP server writes.
- `mcphttp`: an HTTP tap on the SDK client's requests, and the checks of what went over it.
- `toolnames`: the checks of tool names that MCP clients (Claude Desktop and others) impose.
- `brokers`: real MQTT brokers (amqtt in-process; mosquitto for make test-mosquitto).
- `mqttharness`: a backend speaking MQTT as xiaozhi-mqtt-gateway does.
- `mqttdevice`: a scripted device on MQTT, for the backend.
- `otacheckserver`: a scripted OTA check-in server (check and activate).
- `oledtext`, `lcdtext`: the text a simulated SSD1306's RAM or an SPI LCD's pixels show, read
  with the glyphs of the framebuf that drew it.
- `webharness`: the browser tests' backend, devices and Chromium; `wifisetupharness`: the
  Wi-Fi setup page's.
- `simtranscript`: what make sim's transcript must show.
- `platforms`: pip's resolution of the run-time pins for other platforms.
- `serialrig`: the serial-line boards' rig for the tests (tools.sim.ptyboard); `makerapp.py` the maker's module it deploys.
- `commitmsg`: the house's commit messages, checked (the commit-msg hook of .githooks/).
- `mpyclients`: client scripts run under the MicroPython unix port (`run_script`).

The helpers the portable cases share with the host tests (esp_image, ChunkStream, Wire) are
not here: they run inside MicroPython too, beside those cases.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
