"""The simulated board's stop (tools.sim.board.SimBoard.stop, a Ctrl-C): a CPython board
stops cleanly and records its boot even when the process that started it ignores SIGINT
(a CPython child then ignores it too unless it says otherwise, and was killed after the
grace, its boot unrecorded); a lost Ctrl-C is pressed again; a deaf board is killed."""

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


def _stop_with_app(tmp_path, app_text):
    """(the board, stop()'s status) of a CPython board running `app_text` as its maker's
    module, stopped once connected."""
    app = tmp_path / "app.py"
    app.write_text(app_text)

    async def scenario():
        backend = await Backend().start()
        try:
            sim = Sim(backend.url, tmp_path / "state", app=app).start()
            await backend.next_device()
            return sim, sim.stop()
        finally:
            await backend.stop()

    return run(scenario())


# A maker's module that makes the board deaf to Ctrl-C (CPython: SIGINT ignored).
DEAF_APP = '''import signal


def register(server, board):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
'''


def test_a_board_that_ignores_ctrl_c_is_killed_and_stop_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(board_module, "STOP_AGAIN_S", 1)
    monkeypatch.setattr(board_module, "STOP_GRACE_S", 1)
    sim, status = _stop_with_app(tmp_path, DEAF_APP)
    assert status != 0  # a clean stop is 0: a caller asserting it hears of the kill
    assert sim.records() == []  # killed: the boot's record was never written
    with open(sim.log_path) as log:
        assert "killed" in log.read()


# A maker's module that loses the first Ctrl-C, as the unix port's firmware does when the
# interrupt lands inside a garbage collection (tools/sim/board.py, STOP_AGAIN_S).
FIRST_LOST_APP = '''import signal


def _lost(signum, frame):
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the next one stops it


def register(server, board):
    signal.signal(signal.SIGINT, _lost)
'''


def test_a_lost_ctrl_c_is_pressed_again_and_the_board_stops_cleanly(tmp_path, monkeypatch):
    monkeypatch.setattr(board_module, "STOP_AGAIN_S", 1)
    monkeypatch.setattr(board_module, "STOP_GRACE_S", 3)
    sim, status = _stop_with_app(tmp_path, FIRST_LOST_APP)
    assert status == 0
    assert [record["reason"] for record in sim.records()] == ["stop"]  # its clean stop
    with open(sim.log_path) as log:
        said = log.read()
    assert "Ctrl-C again" in said and "killed" not in said

