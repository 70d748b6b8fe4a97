"""A throw-away PostgreSQL on a loopback port, for the tests and ``tablectl bench hall`` (the way
:mod:`firmware_host.sim.broker` runs Mosquitto): Debian's server binaries (``apt-get install postgresql``
when missing and allowed), a fresh cluster in one directory, trust on loopback only. As root it runs
as the ``postgres`` user (PostgreSQL refuses root)."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import time
from pathlib import Path

from firmware_host.sim.broker import apt_install, free_port


class PostgresError(RuntimeError):
    """PostgreSQL is missing (and could not be installed) or did not start: the message says what to do."""


def find_bin(install: bool = True) -> Path:
    """The folder of Debian's PostgreSQL server binaries (``initdb``, ``postgres``)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    if install:
        why = apt_install("postgresql")
        if not why:
            return find_bin(install=False)
        raise PostgresError(f"PostgreSQL could not be installed ({why}); install it with: "
                            "sudo apt-get install postgresql")
    raise PostgresError("PostgreSQL is not installed; install it with: sudo apt-get install postgresql")


class LocalPostgres:
    """PostgreSQL on 127.0.0.1:*port*, its cluster in *directory*; :meth:`start` (or ``with``), :meth:`url`
    of a database it creates, :meth:`stop` (idempotent)."""

    def __init__(self, directory: str | Path, port: int | None = None, install: bool = True) -> None:
        self.directory = Path(directory)
        self.port = port or free_port()
        self.bin = find_bin(install)
        self.user = "postgres" if os.geteuid() == 0 else None
        self.proc: subprocess.Popen[bytes] | None = None

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), user=self.user, capture_output=True, text=True, check=False)

    def start(self, timeout: float = 30.0) -> LocalPostgres:
        data = self.directory / "data"
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.user:
            entry = pwd.getpwnam(self.user)
            shutil.chown(self.directory, entry.pw_uid, entry.pw_gid)
        if not data.exists():
            done = self._run(str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                             "-E", "UTF8", "--no-sync")
            if done.returncode:
                raise PostgresError(f"initdb failed: {done.stderr.strip()[-300:]}")
        log = open(self.directory / "postgres.log", "ab")  # noqa: SIM115 (closed with the server)
        self.proc = subprocess.Popen([str(self.bin / "postgres"), "-D", str(data), "-p", str(self.port),
                                      "-h", "127.0.0.1", "-k", str(self.directory), "-c", "max_connections=60"],
                                     user=self.user, stdout=log, stderr=log)
        log.close()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise PostgresError(f"PostgreSQL did not start (see {self.directory / 'postgres.log'})")
            if self._run(str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)).returncode == 0:
                return self
            time.sleep(0.1)
        self.stop()
        raise PostgresError(f"PostgreSQL did not answer on 127.0.0.1:{self.port} within {timeout:g} s")

    def url(self, database: str = "pokerhall") -> str:
        """The URL of *database*, created if it is not there."""
        import psycopg
        with psycopg.connect(self.url_of("postgres"), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone():
                conn.execute(f'CREATE DATABASE "{database}"')
        return self.url_of(database)

    def url_of(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server (fast shutdown). Idempotent."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
