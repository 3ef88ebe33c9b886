"""What the host tests share (imported as tests.support.<module>; none of it runs on the device).

- `mcp_wire`: McpWire, a client's end of an McpServer that validates all it sends.
- `firmware_harness`: the firmware against a scripted backend (Sim, Backend, device_session,
  the runtimes, certificates, HTTP, image and vision servers).
- `fake_device`: a scripted device with resources, for the bridge.
- `wire_tap`: run as a script, it logs every line a stdio MCP server writes.
- `brokers`: real MQTT brokers (amqtt in-process; mosquitto for make test-mosquitto).
- `mqtt_harness`: a backend speaking MQTT as xiaozhi-mqtt-gateway does.
- `mqtt_device`: a scripted device on MQTT, for the backend.
- `otacheck_server`: a scripted OTA check-in server (check and activate).
- `oled_text`: the text a simulated SSD1306's RAM shows, read with the glyphs of the framebuf
  that drew it.
- `web_harness`: the browser tests' backend, devices and Chromium.
- `hostile`: the hostile-input fuzzer (make test and make soak).
- `mpy_clients`: client scripts run under the MicroPython unix port (`run_script`).

The helpers the portable cases share with the host tests (esp_image, ChunkStream) are not
here: they run inside MicroPython too, beside those cases.
"""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
