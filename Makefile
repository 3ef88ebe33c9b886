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

.PHONY: help setup test test-mosquitto test-contract test-compile test-device test-host sim bench deploy flash repl clean

help:
	@echo "make sim      simulated device + local backend, prints a session transcript"
	@echo "make test     everything CI runs (sets up .venv and node_modules itself)"
	@echo "make test-mosquitto   the MQTT tests against Debian's mosquitto"
	@echo "make bench    MCP core figures (CPython, MicroPython) and the whole firmware's heap"
	@echo "make deploy PORT=/dev/ttyUSB0 BOARD=$(BOARD)   copy the firmware to a board"
	@echo "make flash  PORT=/dev/ttyUSB0 CHIP=esp32s3 FIRMWARE=micropython.bin"
	@echo "make repl   PORT=/dev/ttyUSB0"

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.installed node_modules/.installed

test: setup test-contract test-compile test-device test-host

# The import rules of docs/DESIGN.md ("Layers"), written down once in .importlinter.
test-contract: setup
	PYTHONPATH=lib:firmware:. $(VENV)/bin/lint-imports --config .importlinter --no-cache

# Every file that goes onto the device must compile the way the device compiles it.
test-compile: setup
	$(PY) -m tools.mpy.compile_all

# The device test cases inside real MicroPython: WebAssembly build and unix port.
test-device: setup
	node tools/mpy/run_wasm.mjs
	$(PY) -m tools.mpy.run_unix --micropython $(MPY)

test-host: setup
	$(PY) -m pytest -q

# The MQTT tests again against Debian's mosquitto (apt-get install mosquitto) instead of
# the in-process amqtt broker: broker restart, wrong credentials, TLS, half-open, sessions.
test-mosquitto: setup
	UMCP_MOSQUITTO=1 $(PY) -m pytest -q -m mosquitto

sim: $(VENV)/.installed
	$(PY) -m tools.sim.demo

bench: setup
	$(PY) -m tools.bench

deploy: $(VENV)/.installed
	$(PY) -m tools.board.deploy --port $(PORT) --board $(BOARD)

flash: $(VENV)/.installed
	$(PY) -m tools.board.flash --port $(PORT) --chip $(CHIP) --baud $(BAUD) --firmware "$(FIRMWARE)"

repl: $(VENV)/.installed
	$(PY) -m tools.board.repl --port $(PORT)

clean:
	rm -rf $(VENV) node_modules build .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
