# The parts' tables agree (docs/recipes.md, "A part type"): a type is written down in four
# places, parts.check (TYPES, OPTIONS: what an entry may hold), parts.setup (KINDS: its
# runtime module and class), parts.toolset (TOOLS, VALUES, SCHEMAS: its tools, the
# attributes their descriptions show, their output schemas) and its runtime module
# (parts.output, parts.sensor, parts.oled, parts.lcd: the methods the tools call, and a
# sensor's read()). Each type is made here from its smallest entry on the simulated
# hardware and listed and called through a server, so a type added to one table and not
# another fails by name. Runs under pytest and inside MicroPython.
import hwsim
from parts import Part
from parts import check, setup, toolset
from portable_support import ToolClient, generic_board

# parts.check's pin kinds (const(): they have no names on MicroPython): _OUT, _IN, _IO, _ADC.
PIN_KINDS = (1, 2, 3, 4)
ADC_KIND = 4
# Free pins of an esp32 (config.json "chip" of the simulated generic board): outputs and
# bus lines, then the ADC1 inputs.
FREE_PINS = [2, 4, 5, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 25, 26, 27]
ADC_PINS = [32, 33, 34, 35]
SENSOR_MODULE = "sensor"
BOARDS_OWN = ("display",)  # KINDS' types no config.json entry names: a board's own LCD


def smallest_entry(kind):
    """A config.json entry of `kind` with only its required options, each given a value
    its option's kind takes."""
    entry = {"type": kind, "name": "my_" + kind}
    pins, adcs = list(FREE_PINS), list(ADC_PINS)
    for option in check.OPTIONS[kind]:
        key, option_kind, default = option[0], option[1], option[2]
        if default != check.REQUIRED:
            continue
        if option_kind == ADC_KIND:
            entry[key] = adcs.pop(0)
        elif option_kind in PIN_KINDS:
            entry[key] = pins.pop(0)
        else:  # a number within its bounds (an LCD's width and height)
            low, high = option[3], option[4]
            entry[key] = (low + high) // 2
    return entry


def test_check_knows_each_type_once_with_its_options():
    assert len(set(check.TYPES)) == len(check.TYPES)
    assert sorted(check.OPTIONS) == sorted(check.TYPES)
    if hasattr(check, "_ADC"):  # CPython: the pin kinds above are parts.check's
        assert (check._OUT, check._IN, check._IO, check._ADC) == PIN_KINDS


def test_setup_makes_each_type_check_lets_through():
    assert sorted(setup.KINDS) == sorted(list(check.TYPES) + list(BOARDS_OWN))
    for kind, (module, name) in setup.KINDS.items():
        runtime = getattr(__import__("parts." + module), module)
        assert issubclass(getattr(runtime, name), Part), kind
        assert setup.module_of(kind) == module


def test_the_toolset_names_types_verbs_and_methods_that_exist():
    for kind, tools in toolset.TOOLS.items():
        assert kind in check.TYPES, kind
        module, name = setup.KINDS[kind]
        runtime = getattr(getattr(__import__("parts." + module), module), name)
        verbs = [tool[0] for tool in tools]
        assert len(set(verbs)) == len(verbs), kind
        for verb, template, hints, method in tools:
            assert callable(getattr(runtime, method, None)), "%s.%s calls %s.%s, which is missing" % (
                kind, verb, name, method)
            assert len(hints) == 3, (kind, verb)
    for kind in toolset.VALUES:
        assert kind in toolset.TOOLS, kind
    for key in toolset.SCHEMAS:
        kind, verb = key.split(".")
        assert verb in [tool[0] for tool in toolset.TOOLS[kind]], key


async def test_each_type_is_made_listed_and_called_from_its_smallest_entry():
    for kind in check.TYPES:
        entry = smallest_entry(kind)
        board = generic_board([entry])
        part = board.parts[0]
        assert (part.kind, part.name) == (kind, entry["name"])
        # A sensor is read on a schedule (parts.sensor.serve); nothing else is.
        sensor = setup.module_of(kind) == SENSOR_MODULE
        assert bool(part.poll_ms) == sensor, kind
        client = ToolClient(board)
        listed = (await client.request("tools/list"))["result"]["tools"]
        expected = ["self.%s.%s" % (entry["name"], tool[0]) for tool in toolset.TOOLS.get(kind, ())]
        assert sorted(tool["name"] for tool in listed) == sorted(expected), kind
        for tool in listed:
            # The template took the label (or the values VALUES names) and left no field open.
            text = tool["description"]
            assert "my " + kind in text and not [f for f in ("%s", "%d", "%g") if f in text], tool
        if sensor:
            reading = part.read()
            if hasattr(reading, "send"):  # a DS18B20's: a coroutine
                reading = await reading
            assert isinstance(reading, dict) and reading, (kind, reading)
            state = await client.call("self.%s.%s" % (entry["name"], toolset.TOOLS[kind][0][0])) \
                if kind in toolset.TOOLS else part.state()
            assert isinstance(state, dict), (kind, state)
    hwsim.reset()
