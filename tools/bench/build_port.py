"""Build the measuring form's MicroPython unix port: 32-bit (an ESP32's object sizes), with
the simulated hardware frozen in (unix_hwsim_manifest.py; --firmware-too: the firmware as
well, unix_frozen_manifest.py, for make bench's frozen column).

    python -m tools.bench.build_port --source ~/micropython --build /tmp/mp-x86-hwsim
    UMCP_MICROPYTHON_HWSIM=/tmp/mp-x86-hwsim/micropython make bench

--source is a MicroPython checkout (v1.24+, its mpy-cross built or buildable; the
micropython-lib submodule is not needed); the build goes to --build (the source tree is
left as it was), and the binary is --build/micropython. Needs gcc's 32-bit support
(Debian: gcc-multilib).
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFESTS = {False: os.path.join(HERE, "unix_hwsim_manifest.py"),
             True: os.path.join(HERE, "unix_frozen_manifest.py")}
# The options of the 32-bit unix port the other measurements use: no FFI or btree (not on
# an ESP32), TLS as the small axTLS.
OPTIONS = ("VARIANT=standard", "MICROPY_PY_FFI=0", "MICROPY_PY_BTREE=0", "MICROPY_PY_SSL=1",
           "MICROPY_SSL_AXTLS=1", "MICROPY_SSL_MBEDTLS=0", "CFLAGS_EXTRA=-m32",
           "LDFLAGS_EXTRA=-m32 -static")


def make_command(source, build, firmware_too=False, jobs=2):
    """The make command line that builds the port from `source` into `build`."""
    return (["make", "-C", os.path.join(source, "ports", "unix"), "-j%d" % jobs,
             "BUILD=" + os.path.abspath(build), "FROZEN_MANIFEST=" + MANIFESTS[firmware_too]]
            + list(OPTIONS))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.bench.build_port", description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="a MicroPython checkout")
    parser.add_argument("--build", required=True, help="the build folder (outside the checkout is fine)")
    parser.add_argument("--firmware-too", action="store_true",
                        help="freeze the firmware as well (make bench's frozen column)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if not os.path.isfile(os.path.join(args.source, "ports", "unix", "Makefile")):
        parser.error("%s is not a MicroPython checkout (no ports/unix/Makefile)" % args.source)
    done = subprocess.run(make_command(args.source, args.build, args.firmware_too, args.jobs))
    if done.returncode != 0:
        return done.returncode
    print(os.path.join(os.path.abspath(args.build), "micropython"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
