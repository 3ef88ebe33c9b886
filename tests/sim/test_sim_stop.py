"""The simulated board's stop (tools.sim.board.SimBoard.stop, a Ctrl-C): a CPython board
stops cleanly and records its boot even when the process that started it ignores SIGINT
(a CPython child then ignores it too unless it says otherwise, and was killed after the
grace, its boot unrecorded)."""

import signal

import pytest

import tools.sim.board as board_module
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


# A maker's module that makes the board deaf to Ctrl-C (CPython: SIGINT ignored).
DEAF_APP = '''import signal


def register(server, board):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
'''


def test_a_board_that_ignores_ctrl_c_is_killed_and_stop_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(board_module, "STOP_GRACE_S", 1)
    app = tmp_path / "app.py"
    app.write_text(DEAF_APP)

    async def scenario():
        backend = await Backend().start()
        try:
            sim = Sim(backend.url, tmp_path / "state", app=app).start()
            await backend.next_device()
            return sim, sim.stop()
        finally:
            await backend.stop()

    sim, status = run(scenario())
    assert status != 0  # a clean stop is 0: a caller asserting it hears of the kill
    assert sim.records() == []  # killed: the boot's record was never written
    with open(sim.log_path) as log:
        assert "killed" in log.read()
