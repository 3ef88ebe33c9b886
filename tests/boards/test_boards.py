"""Board descriptions over the simulated hardware: pins, peripherals, restored settings, tools."""

import itertools
import json
import os

import pytest

import camera as sim_camera
import esp32
import hwsim
import machine
import network
import neopixel
from boards import Board
from umcpfw.boot import load_board as load
from drivers.aw88298 import AW88298
from drivers.backlight import Axp2101Backlight, PwmBacklight
from drivers.camera import Camera
from drivers.es8311 import ES8311
from devsvc.settings import Settings
from tests.support import ROOT
from tools.board.deploy import BOARDS_SHARED

# Every board module make deploy offers: lib/boards/ but the modules every board shares.
BOARDS = sorted(name[:-3] for name in os.listdir(os.path.join(ROOT, "lib", "boards"))
                if name.endswith(".py") and name not in BOARDS_SHARED)
_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def power_on():
    hwsim.reset()


@pytest.fixture
def saved(tmp_path):
    settings = Settings(str(tmp_path / "settings.json"))
    settings.update({"volume": 60, "brightness": 40, "theme": "dark"})
    return settings


async def call(wire, name, arguments=None):
    response = await wire.request("tools/call", {"name": name, "arguments": arguments or {}},
                                  id=next(_ids))
    result = response["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


@pytest.mark.parametrize("name", BOARDS)
def test_every_board_module_has_the_contract(name):
    module = load(name)
    assert module.NAME == name
    assert isinstance(module.PINS, dict)
    assert module.PINS or name == "generic"  # its pins are all the maker's (config.json's parts)
    board = module.create({}, None)
    assert isinstance(board, Board)
    assert board.status()["board"] == name


@pytest.mark.parametrize("name", ["", "nope", "../etc", "Host", "host.x"]
                         + [shared[:-3] for shared in BOARDS_SHARED])
def test_load_rejects_unknown_or_malformed_names(name):
    with pytest.raises(ImportError):
        load(name)


def test_box3_peripherals_and_pins(saved):
    codec = machine.sim_attach_i2c(1, 0x18, machine.I2CDevice())
    board = load("esp32_s3_box3").create({}, saved)
    bus = machine.sim_i2c_bus(1)
    assert (bus.sda, bus.scl) == (8, 18)
    assert isinstance(board.speaker, ES8311)
    assert machine.sim_pin(46).value() == 1  # amplifier enabled
    assert codec.regs[0x32] == 98 + 60  # saved volume restored
    assert isinstance(board.backlight, PwmBacklight)
    assert machine.sim_pwm(47).duty_u16() == 40 * 65535 // 100  # not inverted
    assert board.display.info()["width"] == 320 and board.display.theme == "dark"
    assert board.camera is None
    assert isinstance(board.wlan, network.WLAN)


def test_box3_without_an_answering_codec_runs_without_speaker():
    board = load("esp32_s3_box3").create({}, None)
    assert board.speaker is None
    assert board.backlight is not None and board.display is not None


def test_cores3_powers_up_and_drives_amplifier_and_pmic_backlight(saved):
    pmic = machine.sim_attach_i2c(1, 0x34, machine.I2CDevice({0x90: 0x01, 0xA4: 87, 0x01: 0x25}))
    expander = machine.sim_attach_i2c(1, 0x58, machine.I2CDevice())
    amp = machine.sim_attach_i2c(1, 0x36, machine.I2CDevice(width=2))
    board = load("m5stack_cores3").create({}, saved)
    bus = machine.sim_i2c_bus(1)
    assert (bus.sda, bus.scl) == (12, 11)
    assert pmic.written(0x90) == [0xB5, 0xBF]  # LDOs on, as the reference
    assert expander.written(0x02) == [0x07, 0x03, 0x07]  # init, then amplifier reset pulse
    assert isinstance(board.speaker, AW88298)
    assert amp.regs[0x0C] == (94 - 60) << 8 | 0x64  # 0x2264: one step per volume point
    assert isinstance(board.backlight, Axp2101Backlight)
    assert pmic.regs[0x99] == (40 + 641) >> 5
    assert board.display.info()["type"] == "ILI9342C"
    assert board.camera is None
    assert board.status()["battery"] == {"level": 87, "charging": True}


def test_cores3_without_pmic_keeps_running():
    board = load("m5stack_cores3").create({}, None)
    assert board.speaker is None and board.backlight is None
    assert "battery" not in board.status()


def test_camera_board_camera_pins_and_no_speaker():
    board = load("esp32s3_cam").create({}, None)
    assert isinstance(board.camera, Camera)
    config = sim_camera.sim_camera().config
    assert config["data_pins"] == [11, 9, 8, 10, 12, 18, 17, 16]
    assert (config["xclk_pin"], config["pclk_pin"], config["vsync_pin"],
            config["href_pin"], config["sda_pin"], config["scl_pin"]) == (15, 13, 6, 7, 4, 5)
    assert board.camera.capture()[:2] == b"\xff\xd8"
    assert board.speaker is None
    assert machine.sim_pwm(38) is not None
    assert board.display.info()["height"] == 320


def test_camera_board_without_camera_module_has_no_camera(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "camera", None)
    assert load("esp32s3_cam").create({}, None).camera is None


@pytest.mark.anyio
async def test_camera_board_lamp_tools(wire):
    load("esp32s3_cam").create({}, None).register_tools(wire.server)
    assert await call(wire, "self.lamp.get_state") == {"power": False}
    assert await call(wire, "self.lamp.turn_on") is True
    assert machine.sim_pin(14).value() == 1
    assert await call(wire, "self.lamp.get_state") == {"power": True}
    await call(wire, "self.lamp.turn_off")
    assert machine.sim_pin(14).history == [0, 1, 0]


def test_host_board_parts_are_real_drivers_on_hwsim(saved):
    board = load("host").create({}, saved)
    codec = machine.sim_i2c_device(0, 0x18)
    assert isinstance(board.speaker, ES8311) and codec.regs[0x32] == 98 + 60
    assert machine.sim_pwm(47).duty_u16() == 40 * 65535 // 100
    assert board.display.theme == "dark"
    assert board.camera.capture()[-2:] == b"\xff\xd9"
    assert board.wlan is None
    assert board.status() == {"board": "host", "simulated": True}


@pytest.mark.anyio
async def test_host_board_tools(wire):
    board = load("host").create({}, None)
    board.register_tools(wire.server)
    listed = await wire.request("tools/list", id="list")
    names = [t["name"] for t in listed["result"]["tools"]]
    assert names == ["self.led_strip.set_color", "self.led_strip.get_state",
                     "self.host.get_temperature"]
    assert await call(wire, "self.led_strip.set_color", {"red": 255, "green": 0, "blue": 8})
    assert neopixel.sim_strip(48).frames[-1] == [(255, 0, 8)] * 8
    assert await call(wire, "self.led_strip.get_state") == {"color": [255, 0, 8], "leds": 8}
    esp32.sim_set_temperature(51.5)
    assert await call(wire, "self.host.get_temperature") == {"celsius": 51.5}
    response = await wire.request("tools/call", {"name": "self.led_strip.set_color",
                                                 "arguments": {"red": 256, "green": 0,
                                                               "blue": 0}}, id="bad")
    assert "error" in response or response["result"].get("isError")
    assert len(neopixel.sim_strip(48).frames) == 1
