"""Where the host programs find the files that are not their own Python: the device's code
(lib/, firmware/) and the simulated hardware, in a clone of the repository and in an
installed copy alike. Standard library only, nothing done on import (tools.devicelib puts
lib/ on sys.path).

In a clone this package is the folder tools/ beside lib/ and firmware/. Installed (pip,
uvx: pyproject.toml) it is the package `umcp_host`, and lib/ and firmware/ ship inside
it. PACKAGE is the name it was imported under, so a child process started with
module_command() runs the same copy."""

import os
import sys

HOST = os.path.dirname(os.path.abspath(__file__))
PACKAGE = __name__.rpartition(".")[0]  # "tools" in a clone, "umcp_host" installed
INSTALLED = os.path.isdir(os.path.join(HOST, "lib"))
# The folder that holds lib/ and firmware/: the clone's root, or the installed package.
ROOT = HOST if INSTALLED else os.path.dirname(HOST)
LIB = os.path.join(ROOT, "lib")
FIRMWARE = os.path.join(ROOT, "firmware")
HWSIM = os.path.join(HOST, "sim", "hwsim")


def module_command(module, python=None):
    """The command line that runs the host module `module` ("sim", "board.deploy") of this
    copy, and the folder to start it in (where the package is found)."""
    return [python or sys.executable, "-m", PACKAGE + "." + module], os.path.dirname(HOST)


def module_prog(module):
    """How `python -m` runs the host module `module` ("board.deploy") of this copy, for a usage
    line: `python3 -m tools.board.deploy` in a clone, `python3 -m umcp_host.board.deploy`
    installed (where `umcp deploy` passes its own prog instead)."""
    return "python3 -m %s.%s" % (PACKAGE, module)


def beside_python(name):
    """The venv's own copy of a console script (mpremote, esptool, micropython), else `name`
    from PATH."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    return path if os.path.exists(path) else name


def hint(make, umcp):
    """What a message tells the user to run: the make target in a clone (`make`), the
    installed command (`umcp`) in an installed copy."""
    return umcp if INSTALLED else make
