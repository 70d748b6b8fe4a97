"""Debian tools the Pi's tests run for real (dtc, systemd-analyze): installed from the system packages when
missing, as the broker is (``.ci/run`` installs them up front); a test fails, never skips, without them."""
from __future__ import annotations

import shutil
import signal

import pytest

from firmware_host.sim.broker import apt_install

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def system_tool(name: str, package: str) -> str:
    """The path of *name*; ``apt-get install PACKAGE`` first when it is missing and that is allowed."""
    found = shutil.which(name) or shutil.which(name, path=SYSTEM_PATH)
    if not found:
        why = apt_install(package)
        found = shutil.which(name) or shutil.which(name, path=SYSTEM_PATH)
        if not found:
            pytest.fail(f"{name} is not installed and could not be ({why or 'not found after install'}): "
                        f"sudo apt-get install {package}")
    return found


def ctrl_c_default() -> None:
    """``preexec_fn`` for a child a test sends Ctrl-C (SIGINT) as a terminal would: its default action back.
    A suite started in the background by a shell without job control ignores SIGINT, and its children
    inherit that (Python then installs no KeyboardInterrupt handler in them)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
