"""Child processes of the host programs, started and stopped the same way everywhere (a
simulated board, a bridge or backend a test or bench starts, mosquitto).

`own_process_group()` gives Popen's arguments for a child in a process group of its own
(a Ctrl-C in the terminal then reaches only the parent, which stops the child itself);
`interrupt()` asks such a child to stop as Ctrl-C would; `stop_process()` stops any child:
SIGTERM (Windows: Ctrl-Break), then SIGKILL if it has not ended within a grace. Standard
library only.
"""

import os
import signal
import subprocess

STOP_TIMEOUT = 10.0


def own_process_group():
    """Popen's arguments that start a child in a process group of its own."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def windows_process_group():
    """On Windows, own_process_group()'s arguments (stop_process can then send Ctrl-Break:
    terminate() there would end a simulator without its child); elsewhere none."""
    return own_process_group() if os.name == "nt" else {}


def interrupt(process):
    """Ask a child started with own_process_group() to stop as Ctrl-C would: SIGINT, or on
    Windows Ctrl-Break (tools/sim/device.py takes it as SIGINT)."""
    process.send_signal(signal.CTRL_BREAK_EVENT if os.name == "nt" else signal.SIGINT)


def stop_process(process, timeout=STOP_TIMEOUT):
    """SIGTERM (Windows: Ctrl-Break, see windows_process_group), then SIGKILL if it has
    not ended within `timeout` seconds."""
    if process.poll() is None:
        if os.name == "nt":
            interrupt(process)
        else:
            process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
