"""A throw-away Mosquitto on a free loopback port, for the demo and the benchmarks."""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path


class BrokerMissing(RuntimeError):
    """Mosquitto is not installed and could not be installed: the message says what to do."""


def find_mosquitto(install: bool = True) -> str:
    """The mosquitto binary; with *install*, ``apt-get install mosquitto`` when missing and allowed."""
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    if install and shutil.which("apt-get"):
        prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
        if prefix and not shutil.which("sudo"):
            raise BrokerMissing("Mosquitto is not installed; install it with: sudo apt-get install mosquitto")
        print("Mosquitto is not installed: installing it from the system packages (apt-get install mosquitto)...",
              flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run([*prefix, "apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
        done = subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", "mosquitto"], env=env, check=False,
                              capture_output=True, text=True)
        if done.returncode == 0:
            return find_mosquitto(install=False)
        raise BrokerMissing(f"Mosquitto could not be installed ({done.stderr.strip()[-200:]}); "
                            "install it with: sudo apt-get install mosquitto")
    raise BrokerMissing("Mosquitto is not installed; install it with: sudo apt-get install mosquitto")


class LocalMosquitto:
    """Mosquitto on 127.0.0.1 and a free port, anonymous, config and data in *directory*."""

    def __init__(self, directory: str | Path, *, install: bool = True) -> None:
        binary = find_mosquitto(install)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        conf = Path(directory) / "mosquitto.conf"
        user = f"user {pwd.getpwuid(os.getuid()).pw_name}\n"     # as root, do not switch to 'mosquitto'
        conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 1000000\n"
                        f"max_inflight_messages 0\nmax_connections -1\n{user}")
        self.proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        end = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > end:
                    self.close()
                    raise BrokerMissing(f"Mosquitto did not start on 127.0.0.1:{self.port}") from None
                time.sleep(0.05)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> LocalMosquitto:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
