"""A throw-away Mosquitto on a loopback port, for the demo, the benchmarks and the tests.

Its config, log and persistence live in one directory; it can run the shipped ACL and password
file (``hardware/mosquitto/``) and serve TLS, and restarts on the same port.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import time
from pathlib import Path


class BrokerError(RuntimeError):
    """Mosquitto is missing (and could not be installed) or did not start: the message says what to do."""


def apt_install(package: str) -> str:
    """``apt-get install PACKAGE`` from the system packages (as root, or through ``sudo -n``):
    "" when done, else why not (the demo and the tests install what they run with this)."""
    if not shutil.which("apt-get"):
        return "no apt-get on this system"
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    if prefix and not shutil.which("sudo"):
        return "not root and no sudo"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run([*prefix, "apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
    done = subprocess.run([*prefix, "apt-get", "install", "-y", "-qq", package], env=env, check=False,
                          capture_output=True, text=True)
    return "" if done.returncode == 0 else done.stderr.strip()[-200:] or f"exit {done.returncode}"


def find_mosquitto(install: bool = True) -> str:
    """The mosquitto binary; with *install*, ``apt-get install mosquitto`` when missing and allowed."""
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    if install:
        print("Mosquitto is not installed: installing it from the system packages (apt-get install mosquitto)...",
              flush=True)
        why = apt_install("mosquitto")
        if not why:
            return find_mosquitto(install=False)
        raise BrokerError(f"Mosquitto could not be installed ({why}); install it with: sudo apt-get install mosquitto")
    raise BrokerError("Mosquitto is not installed; install it with: sudo apt-get install mosquitto")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# Lines of a site's mosquitto.conf that name its own ports, files and certificates: replaced on loopback.
SITE_KEYS = frozenset({"listener", "port", "bind_address", "cafile", "capath", "certfile", "keyfile", "tls_version",
                       "require_certificate", "use_identity_as_username", "password_file", "acl_file",
                       "persistence_location", "persistence_file", "log_dest", "log_type", "user", "pid_file",
                       "include_dir"})


def site_settings(config: Path) -> list[str]:
    """The settings of a site's mosquitto.conf (the shipped example) that are not its ports, files or
    certificates: persistence, autosave, queues, client ids, anonymity... kept verbatim."""
    kept = []
    for line in config.read_text().splitlines():
        words = line.split()
        if words and not line.startswith("#") and words[0] not in SITE_KEYS:
            kept.append(line.strip())
    return kept


class LocalMosquitto:
    """Mosquitto on 127.0.0.1:*port* (default: a free one), its config, log and data in *directory*.

    With *config* (the shipped ``hardware/mosquitto/mosquitto.conf.example``), that file's settings
    are run verbatim (:func:`site_settings`), only its ports, paths and certificates replaced; else an
    anonymous broker without persistence. *password_file* and *acl_file* as given; *tls* is (CA,
    certificate, key). :meth:`start` runs it (a ``with`` block too), :meth:`stop` ends it,
    :meth:`kill` kills it; it can start again on the same port, with what it had saved.
    """

    def __init__(self, directory: str | Path, *, port: int | None = None, acl_file: Path | None = None,
                 password_file: Path | None = None, config: Path | None = None,
                 tls: tuple[Path, Path, Path] | None = None, install: bool = True) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.install = install
        user = pwd.getpwuid(os.getuid()).pw_name     # as root, do not switch to 'mosquitto' (no access here)
        lines = [f"listener {self.port} 127.0.0.1"]
        if tls:
            lines += [f"cafile {tls[0]}", f"certfile {tls[1]}", f"keyfile {tls[2]}"]
        if config:
            lines += site_settings(config) + [f"persistence_location {self.directory}/"]
        else:
            lines += ["max_queued_messages 1000000", "max_inflight_messages 0"]
            lines += ["allow_anonymous false"] if password_file else ["allow_anonymous true"]
        lines += [f"user {user}", "max_connections -1", f"log_dest file {self.directory / 'mosquitto.log'}",
                  "log_type error", "log_type warning", "log_type notice"]
        if password_file:
            lines += [f"password_file {password_file}"]
        if acl_file:
            lines += [f"acl_file {acl_file}"]
        self.conf = self.directory / "mosquitto.conf"
        self.conf.write_text("\n".join(lines) + "\n")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout: float = 10.0) -> LocalMosquitto:
        """Run the broker and wait until it accepts connections; :class:`BrokerError` if it cannot."""
        if self.running:
            return self
        self.proc = subprocess.Popen([find_mosquitto(self.install), "-c", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > end:
                    self.stop()
                    raise BrokerError(f"Mosquitto did not start on 127.0.0.1:{self.port} "
                                      f"(see {self.directory / 'mosquitto.log'})") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """End the broker (SIGTERM, then SIGKILL after 10 s). Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """Kill the broker at once, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def __enter__(self) -> LocalMosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
