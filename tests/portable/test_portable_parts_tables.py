# Every part type, as parts.types holds it (docs/recipes.md, "A part type"): its runtime
# class and the methods its tools name exist, and each type, made from its smallest entry
# on the simulated hardware, lists its tools, answers a call of EVERY tool (the arguments
# built from the tool's own input schema) and then a state() of its own. A type missing
# from wire(), from its class's state() or read(), or a tool naming a method that is not
# there, fails by name. Runs under pytest and inside MicroPython.
import hwsim
from parts import Part
from parts import check, setup, types
from parts.output import Output
from parts.sensor import Sensor
from portable_support import ToolClient, generic_board

# parts.types' kinds of option (const(): they have no names on MicroPython): _OUT, _IN,
# _IO, _ADC, _INT, _NUMBER, _BOOL, _TEXT.
OPTION_KINDS = (1, 2, 3, 4, 5, 6, 7, 8)
PIN_KINDS = (1, 2, 3, 4)
ADC_KIND = 4
# Free pins of an esp32 (config.json "chip" of the simulated generic board): outputs and
# bus lines, then the ADC1 inputs.
FREE_PINS = [2, 4, 5, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 25, 26, 27]
ADC_PINS = [32, 33, 34, 35]
SENSOR_MODULE = "sensor"


def smallest_entry(kind):
    """A config.json entry of `kind` with only its required options, each given a value
    its option's kind takes."""
    entry = {"type": kind, "name": "my_" + kind}
    pins, adcs = list(FREE_PINS), list(ADC_PINS)
    for option in types.TYPES[kind][1]:
        key, option_kind, default = option[0], option[1], option[2]
        if default != types.REQUIRED:
            continue
        if option_kind == ADC_KIND:
            entry[key] = adcs.pop(0)
        elif option_kind in PIN_KINDS:
            entry[key] = pins.pop(0)
        else:  # a number within its bounds (an LCD's width and height)
            low, high = option[3], option[4]
            entry[key] = (low + high) // 2
    return entry


def arguments(schema):
    """Arguments a tool's input schema takes: each property's default, else a value
    within its bounds (the highest: a range's top is the easiest to get wrong)."""
    made = {}
    for name, prop in schema.get("properties", {}).items():
        if "default" in prop:
            made[name] = prop["default"]
        elif prop["type"] == "integer":
            made[name] = prop.get("maximum", prop.get("minimum", 1))
        elif prop["type"] == "string":
            made[name] = "hello"
        else:
            raise AssertionError("a parameter type this test does not make: %r" % (prop,))
    return made


def test_the_option_kinds_agree():
    if hasattr(types, "_OUT"):  # CPython: const() names are kept there
        assert (types._OUT, types._IN, types._IO, types._ADC, types._INT, types._NUMBER, types._BOOL,
                types._TEXT) == OPTION_KINDS
        assert (check._OUT, check._IN, check._IO, check._ADC, check._INT, check._NUMBER, check._BOOL,
                check._TEXT) == OPTION_KINDS


def runtime_class(kind):
    """A type's runtime class: its module's, named as the module capitalized."""
    module = setup.module_of(kind)
    return getattr(getattr(__import__("parts." + module), module), module[0].upper() + module[1:])


def test_each_type_names_a_class_and_methods_that_exist():
    assert issubclass(runtime_class("display"), Part)  # a board's own LCD: made as an lcd
    for kind, found in types.TYPES.items():
        runtime = runtime_class(kind)
        assert issubclass(runtime, Part), kind
        options, tools, values = found[1:]
        keys = [option[0] for option in options]
        assert len(set(keys)) == len(keys) and not [k for k in keys if k in ("type", "name", "description")], kind
        for option in options:
            assert isinstance(option[1], tuple) or option[1] in OPTION_KINDS, (kind, option)
        verbs = [tool[0] for tool in tools]
        assert len(set(verbs)) == len(verbs), kind
        for verb, template, hints, method, parameters, schema in tools:
            assert callable(getattr(runtime, method, None)), "%s.%s calls %s.%s, which is missing" % (
                kind, verb, runtime.__name__, method)
            assert len(hints) == 3, (kind, verb)
            for parameter in parameters or ():
                assert 4 <= len(parameter) <= 6 and parameter[1] in ("integer", "string"), (kind, verb)
        assert values is None or values[0] == "label", kind


async def test_every_tool_of_every_type_is_called_and_each_type_has_its_state():
    for kind in types.TYPES:
        entry = smallest_entry(kind)
        board = generic_board([entry])
        part = board.parts[0]
        assert (part.kind, part.name) == (kind, entry["name"])
        # A sensor is read on a schedule (parts.sensor.serve); nothing else is.
        sensor = setup.module_of(kind) == SENSOR_MODULE
        assert bool(part.poll_ms) == sensor, kind
        client = ToolClient(board)
        listed = (await client.request("tools/list"))["result"]["tools"]
        expected = ["self.%s.%s" % (entry["name"], tool[0]) for tool in types.TYPES[kind][2]]
        assert sorted(tool["name"] for tool in listed) == sorted(expected), kind
        for tool in listed:
            # The template took the label (or the values its entry names) and left no field open.
            text = tool["description"]
            assert "my " + kind in text and not [f for f in ("%s", "%d", "%g") if f in text], tool
            answer = await client.call(tool["name"], arguments(tool["inputSchema"]))
            assert not (isinstance(answer, str) and answer.startswith("error")), (tool["name"], answer)
        if sensor:
            reading = part.read()
            if hasattr(reading, "send"):  # a DS18B20's: a coroutine
                reading = await reading
            assert isinstance(reading, dict) and reading, (kind, reading)
            part.reading = reading
        state = part.state()
        # Every type answers a state of its own: what its tools set, or its last reading
        # (a button's too: it has no tool).
        assert isinstance(state, dict) and state and "error" not in state, (kind, state)
    hwsim.reset()


def test_a_type_without_its_branch_is_an_error_not_another_type_s_state():
    for made in (Output(), Sensor()):
        made.kind = "laser"
        try:
            made.state() if isinstance(made, Output) else made.read()
            assert False, "a type with no branch answered"
        except ValueError as e:
            assert "laser" in str(e)
