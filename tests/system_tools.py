"""Debian tools the Pi's tests run for real (dtc, systemd-analyze): installed from the system packages when
missing, as the broker is (``.ci/run`` installs them up front); a test fails, never skips, without them."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def system_tool(name: str, package: str) -> str:
    """The path of *name*; ``apt-get install PACKAGE`` first when it is missing and that is allowed."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
    if found:
        return found
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if shutil.which("apt-get") and (not prefix or shutil.which("sudo")):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run([*prefix, "apt-get", "update", "-qq"], env=env, capture_output=True, check=False)
        subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", package], env=env, capture_output=True,
                       check=False)
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
        if found:
            return found
    pytest.fail(f"{name} is not installed and could not be: sudo apt-get install {package}")
