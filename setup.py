"""The package list for pyproject.toml (everything else is there): every folder under tools/
(its benches aside), lib/ and firmware/, as a package of umcp_host, found here so that a
package added to lib/ ships without being named anywhere."""

import os

from setuptools import setup

FOLDERS = {"umcp_host": "tools", "umcp_host.lib": "lib", "umcp_host.firmware": "firmware"}
LEFT_OUT = (os.path.join("tools", "bench"),)  # make bench runs from a clone


def packages():
    found = []
    for name, top in FOLDERS.items():
        for folder, subfolders, files in os.walk(top):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__"
                                   and os.path.join(folder, d) not in LEFT_OUT)
            rest = os.path.relpath(folder, top)
            found.append(name if rest == os.curdir else ".".join([name] + rest.split(os.sep)))
    return found


setup(packages=packages(), package_dir=FOLDERS)
