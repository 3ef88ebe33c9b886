# config.json's "events" checked (umcpfw.eventcheck, through umcpfw.configcheck): each mistake is one
# ConfigError naming the event's index and key, the defaults filled in for umcpfw.events.
# Runs under pytest and inside MicroPython.
from umcpfw import ConfigError
from umcpfw.configcheck import check

PARTS = [{"type": "button", "name": "door", "pin": 0}, {"type": "dht", "name": "room", "pin": 27},
         {"type": "relay", "name": "lamp", "pin": 2}]


def _problem(event):
    try:
        check({"board": "generic", "parts": PARTS, "events": [{"part": "door", "on": "press", "say": "hi"}, event]})
    except ConfigError as e:
        return str(e)
    return None


def test_good_events_pass_with_their_defaults_filled_in():
    events = [{"part": "door", "on": "long_press", "say": "someone is at the door"},
              {"part": "room", "on": "above", "value": 28, "say": "it is hot in here"},
              {"part": "room", "on": "below", "value": 16.5, "field": "humidity", "hysteresis": 0.5,
               "every": 5, "ask": "it is dry: turn on the humidifier"}]
    assert check({"board": "generic", "parts": PARTS, "events": events}) == []
    assert (events[1]["field"], events[1]["hysteresis"], events[1]["every"]) == ("temperature_c", 1, 60)
    assert (events[2]["field"], events[2]["hysteresis"], events[2]["every"]) == ("humidity", 0.5, 5)
    assert events[0]["every"] == 60 and "field" not in events[0]


def test_each_mistake_is_one_line_naming_the_event_and_its_key():
    for event, words in (
            ({"part": "garage", "on": "press", "say": "x"}, 'events[1] "part": no part named \'garage\''),
            ({"part": "lamp", "on": "press", "say": "x"}, 'events[1] "part": a relay has no events'),
            ({"part": "door", "on": "above", "value": 1, "say": "x"}, 'events[1] "on": a button\'s is press'),
            ({"part": "room", "on": "press", "say": "x"}, 'events[1] "on": a dht\'s is above or below'),
            ({"part": "room", "on": "above", "say": "x"}, 'events[1] "value": above needs a number'),
            ({"part": "room", "on": "above", "value": "28", "say": "x"}, 'events[1] "value"'),
            ({"part": "room", "on": "above", "value": 28, "field": "pressure", "say": "x"},
             'events[1] "field": a dht reads temperature_c, humidity'),
            ({"part": "room", "on": "above", "value": 28, "hysteresis": 0, "say": "x"}, 'events[1] "hysteresis"'),
            ({"part": "door", "on": "press", "every": -1, "say": "x"}, 'events[1] "every": seconds above 0'),
            ({"part": "door", "on": "press"}, 'events[1] "say": one of "say"'),
            ({"part": "door", "on": "press", "say": "x", "ask": "y"}, 'events[1] "say": one of "say"'),
            ({"part": "door", "on": "press", "ask": ""}, 'events[1] "ask": text of 1 to 120'),
            ({"part": "door", "on": "press", "say": "x" * 121}, 'events[1] "say": text of 1 to 120'),
            ({"part": "door", "on": "press", "say": "x", "when": 1}, 'events[1] "when": unknown key'),
            ("door", "events[1] must be an object")):
        said = _problem(event)
        assert said is not None and said.startswith("config.json ") and words in said, (event, said)
        assert "\n" not in said


def test_events_must_be_a_list():
    try:
        check({"board": "generic", "events": {"part": "door"}})
    except ConfigError as e:
        assert 'config.json: "events" must be a list' in str(e)
    else:
        assert False, "an object was taken for the list"
