"""The simulated board's stop (tools.sim.board.SimBoard.stop, a Ctrl-C): a CPython board
stops cleanly and records its boot even when the process that started it ignores SIGINT
(a CPython child then ignores it too unless it says otherwise, and was killed after the
grace, its boot unrecorded)."""

import signal

import pytest

from tests.support.firmwareharness import Backend, Sim, run

pytestmark = pytest.mark.timeout(60)


def test_a_cpython_board_stops_on_ctrl_c_though_its_parent_ignores_it(tmp_path):
    async def scenario():
        backend = await Backend().start()
        try:
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                sim = Sim(backend.url, tmp_path).start()  # inherits SIGINT ignored
            finally:
                signal.signal(signal.SIGINT, previous)
            await backend.next_device()
            assert sim.stop() == 0
        finally:
            await backend.stop()
        return sim

    sim = run(scenario())
    assert [record["reason"] for record in sim.records()] == ["stop"]
