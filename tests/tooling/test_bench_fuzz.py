"""make bench's fuzz in the measuring form (tools/bench/fuzz.py): the staged .mpy firmware in
the real MicroPython unix port (the venv's) against the bare server on loopback; every request
with a readable id answered with it, no link drop, then each text frame that is not UTF-8 closed
with 1007 (RFC 6455 8.1) and the device back; the figures the bench prints."""

from tools.bench import firmwaretable, fuzz, heap

MESSAGES = 300


def test_the_staged_firmware_answers_every_hostile_message_and_keeps_the_link():
    result = fuzz.measure_fuzz(heap.default_micropython(), 512 * 1024, MESSAGES, form="mpy", invalid=True)
    figures = fuzz.figures(result)
    assert figures["sent"] == MESSAGES and figures["requests"] > MESSAGES // 3
    assert figures["answered"] == figures["requests"] and figures["unanswered"] == 0
    assert figures["null_errors"] == figures["expected_null"] > 0
    assert figures["drops"] == 0 and figures["bad"] == 0 and figures["problems"] == []
    assert figures["limit"] >= 1024  # announced in initialize, and the cases kept within it
    assert figures["invalid"] == [fuzz.NOT_UTF8] * len(fuzz.INVALID_UTF8)  # each on a connection of its own
    lines = firmwaretable.fuzz_lines(figures)
    assert "%d hostile messages" % MESSAGES in lines[1] and "0 link drop(s)" in lines[3]
