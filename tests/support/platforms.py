"""Where the host programs install: every runtime dependency (requirements.txt, and what
each of them requires there) resolved by pip for each platform of PLATFORMS and each
Python of PYTHONS, from wheels only, as a computer of that kind would install it.

pip's own resolution (`pip install --dry-run --only-binary=:all: --platform ... --report`)
reads no file but each wheel's metadata, but it judges environment markers by the machine
it runs on, not by the platform it is asked about; so the requirements of every wheel are
walked again here with that platform's markers, and one a Windows or macOS machine would
need that pip left out is added to the roots and resolved again. A pin that has only a
source distribution (esptool) is built into a wheel here: pure Python (`-none-any`) counts
as installable everywhere, anything else fails.

`python -m tests.support.platforms` prints the matrix (docs/install.md has it in words);
tests/tooling/test_platforms.py runs it in `make test`."""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.support import ROOT

RUNTIME = os.path.join(ROOT, "requirements.txt")
PYTHONS = ("3.11", "3.14")  # the oldest umcp runs on, the newest released


def manylinux(machine, glibc_minor=31):
    """pip's --platform values for Linux on `machine` with glibc 2.<glibc_minor> (Raspberry Pi
    OS 11 and Ubuntu 20.04 have 2.31): every manylinux tag such a system takes."""
    tags = ["manylinux_2_%d_%s" % (minor, machine) for minor in range(glibc_minor, 16, -1)]
    return tags + ["manylinux2014_" + machine, "manylinux2010_" + machine, "manylinux1_" + machine]


# name: (pip's --platform values, the markers' environment there)
PLATFORMS = {
    "Linux x86-64": (manylinux("x86_64"), {"sys_platform": "linux", "platform_system": "Linux",
                                           "platform_machine": "x86_64", "os_name": "posix"}),
    "Linux aarch64": (manylinux("aarch64"), {"sys_platform": "linux", "platform_system": "Linux",
                                             "platform_machine": "aarch64", "os_name": "posix"}),
    "macOS arm64": (["macosx_11_0_arm64"], {"sys_platform": "darwin", "platform_system": "Darwin",
                                            "platform_machine": "arm64", "os_name": "posix"}),
    "macOS x86-64": (["macosx_11_0_x86_64"], {"sys_platform": "darwin", "platform_system": "Darwin",
                                              "platform_machine": "x86_64", "os_name": "posix"}),
    "Windows x86-64": (["win_amd64"], {"sys_platform": "win32", "platform_system": "Windows",
                                       "platform_machine": "AMD64", "os_name": "nt"}),
}
MISSING = re.compile(r"No matching distribution found for (\S+)")


class NotInstallable(Exception):
    pass


def pins(path=RUNTIME):
    """The requirement lines of a requirements file."""
    with open(path) as source:
        return [line.strip() for line in source if line.strip() and not line.lstrip().startswith("#")]


def environment(platform, python):
    env = default_environment()
    env.update(PLATFORMS[platform][1])
    env.update(python_version=python, python_full_version=python + ".0", implementation_name="cpython",
               platform_python_implementation="CPython")
    return env


def pip_resolve(requirements, platform, python, scratch, wheels):
    """pip's resolution for `platform` and `python`: {name: (version, file name, requires_dist)},
    or (None, the requirement pip found no wheel for)."""
    report = os.path.join(scratch, "report.json")
    command = [sys.executable, "-m", "pip", "--isolated", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--target", os.path.join(scratch, "target"),
               "--report", report, "--only-binary=:all:", "--find-links", wheels,
               "--implementation", "cp", "--python-version", python, "--abi", "cp" + python.replace(".", "")]
    for tag in PLATFORMS[platform][0]:
        command += ["--platform", tag]
    done = subprocess.run(command + list(requirements), capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        missing = MISSING.search(done.stderr)
        if missing:
            return None, missing.group(1)
        raise NotInstallable("%s, Python %s: pip failed:\n%s" % (platform, python, done.stderr[-2000:]))
    with open(report) as source:
        items = json.load(source)["install"]
    return {canonicalize_name(item["metadata"]["name"]): (
        item["metadata"]["version"], item["download_info"]["url"].rsplit("/", 1)[-1],
        item["metadata"].get("requires_dist") or []) for item in items}, None


def pure_wheel(requirement, wheels):
    """Build `requirement` (which has no wheel on the index) into `wheels`; NotInstallable
    unless what it builds is pure Python."""
    before = set(os.listdir(wheels))
    done = subprocess.run([sys.executable, "-m", "pip", "--isolated", "wheel", "--quiet", "--disable-pip-version-check",
                           "--no-deps", "--wheel-dir", wheels, requirement],
                          capture_output=True, text=True, timeout=600)
    built = sorted(set(os.listdir(wheels)) - before)
    if done.returncode != 0 or not built:
        raise NotInstallable("%s has no wheel and does not build here:\n%s" % (requirement, done.stderr[-2000:]))
    if not all(name.endswith("-none-any.whl") for name in built):
        raise NotInstallable("%s has no wheel for every platform and is not pure Python (%s)"
                             % (requirement, ", ".join(built)))


def needed_but_left_out(resolved, roots, env):
    """Requirements a machine of `env` needs (roots, and what each resolved wheel requires
    there) that the resolution lacks: pip judged their markers on this machine."""
    wanted = [Requirement(r) for r in roots]
    seen, missing = set(), []
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        key = (name, tuple(sorted(requirement.extras)))
        if key in seen:
            continue
        seen.add(key)
        if name not in resolved:
            missing.append(str(Requirement(str(requirement).split(";")[0])))
            continue
        for line in resolved[name][2]:
            needed = Requirement(line)
            extras = [""] + sorted(requirement.extras)
            if needed.marker is None or any(needed.marker.evaluate(dict(env, extra=e)) for e in extras):
                wanted.append(needed)
    return missing


def check(platform, python, wheels, requirements=None):
    """{name: (version, file)} of every wheel `platform` with `python` installs for the
    runtime requirements; NotInstallable names what has no wheel there."""
    roots = list(requirements or pins())
    env = environment(platform, python)
    built = set()
    with tempfile.TemporaryDirectory(prefix="umcp-platform-") as scratch:
        for _ in range(10):
            resolved, missing = pip_resolve(roots, platform, python, scratch, wheels)
            if resolved is None:
                if missing in built:
                    raise NotInstallable("%s, Python %s: no wheel for %s" % (platform, python, missing))
                pure_wheel(missing, wheels)  # NotInstallable unless pure Python
                built.add(missing)
                continue
            left_out = needed_but_left_out(resolved, roots, env)
            if not left_out:
                return {name: (version, file) for name, (version, file, _) in resolved.items()}
            roots += left_out
    raise NotInstallable("%s, Python %s: the resolution does not settle" % (platform, python))


def matrix(workers=5):
    """{(platform, python): {name: (version, file)}} for every pair, or NotInstallable. The
    first pair runs alone: the pure wheels it builds (into a folder all share) serve the rest."""
    pairs = [(p, v) for p in PLATFORMS for v in PYTHONS]
    with tempfile.TemporaryDirectory(prefix="umcp-pure-wheels-") as wheels:
        first = check(pairs[0][0], pairs[0][1], wheels)
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            rest = list(pool.map(lambda pair: check(pair[0], pair[1], wheels), pairs[1:]))
    return dict(zip(pairs, [first] + rest))


def binary(file):
    """Whether a wheel's file name says it holds compiled code (not -none-any)."""
    return not file.endswith("-none-any.whl")


def main():
    for (platform, python), wheels in matrix().items():
        compiled = sorted("%s %s" % (name, version) for name, (version, file) in wheels.items() if binary(file))
        print("%-15s Python %s: %2d wheels, compiled: %s" % (platform, python, len(wheels), ", ".join(compiled)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
