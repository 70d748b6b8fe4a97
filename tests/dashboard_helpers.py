"""Real parts for the dashboard's tests: the shipped broker, ``tablectl hall run`` serving the dashboard from
the shipped example config, accounts made by ``tablectl hall user add``, tables that play the demo session
under the tests' control, and an HTTP client with its cookies (the browser's part is Chromium's)."""
from __future__ import annotations

import http.cookiejar
import json
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import builtin_profile
from firmware_host.service.config import load_config
from firmware_host.service.service import Service
from firmware_host.sim.demo import script
from hall_helpers import hall_config
from mqtt_helpers import KEY, shipped_broker, user, write_config

TABLECTL = str(Path(sys.executable).with_name("tablectl"))
ACCOUNTS = {"marie": "td", "paul": "floor", "sam": "surveillance", "lucie": "floor"}


def password(name: str) -> str:
    return f"password-of-{name}"


class Hall:
    """A broker running the shipped config and ``tablectl hall run`` with the dashboard, in *directory*."""

    def __init__(self, directory: Path, hole_card_delay: float = 2.0, tables: tuple[str, ...] = ("t1", "t2")):
        self.directory = directory
        self.broker = shipped_broker(directory / "broker").start()
        self.config = hall_config(directory / "hall", self.broker.port, dashboard=dict.fromkeys(tables, KEY))
        toml = directory / "hall" / "hall.toml"
        text = re.sub(r"^hole_card_delay = .*$", f"hole_card_delay = {hole_card_delay}", toml.read_text(), flags=re.M)
        text = re.sub(r"^silent_after = .*$", "silent_after = 5", text, flags=re.M)
        toml.write_text(text)
        for name, role in ACCOUNTS.items():
            subprocess.run([TABLECTL, "hall", "user", "add", name, "--role", role, "--users",
                            str(directory / "hall" / "users.toml"), "--password-stdin"],
                           input=password(name) + "\n", text=True, check=True, capture_output=True)
        self.toml = toml
        self.output: list[str] = []
        self._start()

    def restart(self) -> None:
        """``tablectl hall run`` stopped (SIGTERM) and started again: same config, same archive, a new port."""
        self.process.terminate()
        self.process.wait(20)
        self._release()
        self._start()

    def _start(self) -> None:
        self.process = subprocess.Popen([TABLECTL, "hall", "run", "--config", str(self.toml)],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url = ""
        deadline = time.monotonic() + 30
        while not self.url and time.monotonic() < deadline:
            line = self.process.stdout.readline() if self.process.stdout else ""
            if not line and self.process.poll() is not None:
                break
            self.output.append(line)
            found = re.search(r"dashboard: (http://\S+)/ ", line)
            if found:
                self.url = found.group(1)
        if not self.url:
            self.close()
            raise RuntimeError("the dashboard did not start:\n" + "".join(self.output))
        self._drainer = threading.Thread(target=self._drain, args=(self.process,), daemon=True)
        self._drainer.start()

    def _drain(self, process: subprocess.Popen) -> None:
        for line in process.stdout or ():
            self.output.append(line)

    def _release(self) -> None:
        """The stopped server's output pipe: read to its end, then closed (no file left to the GC)."""
        drainer = getattr(self, "_drainer", None)
        if drainer is not None:
            drainer.join(5)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._release()
        self.broker.stop()


class Gate:
    """The demo's observations, let through up to :meth:`open_to` (the dealer's pace, set by the test)."""

    def __init__(self, observations: list[Any]) -> None:
        self.observations = observations
        self.limit = 0
        self.closed = False
        self._cv = threading.Condition()

    def open_to(self, n: int) -> None:
        with self._cv:
            self.limit = max(self.limit, n)
            self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self.closed = True
            self._cv.notify_all()

    def __iter__(self) -> Iterator[Any]:
        for i, o in enumerate(self.observations):
            with self._cv:
                self._cv.wait_for(lambda i=i: i < self.limit or self.closed)
                if self.closed:
                    return
            yield o


def demo_marks() -> dict[str, int]:
    """Where the demo is: ``hand1_end`` (observations up to hand 1's end), ``hold`` (up to the first
    irregularity that waits for a decision), ``all``."""
    engine = HandEngine(builtin_profile("000"), "t1")
    marks: dict[str, int] = {}
    observations = script()
    for i, o in enumerate(observations):
        for e in engine.feed(o):
            if e.KIND == "hand-ended" and "hand1_end" not in marks:
                marks["hand1_end"] = i + 1
            if e.KIND == "irregularity" and getattr(e, "options", ()) and "hold" not in marks:
                marks["hold"] = i + 1
    marks["all"] = len(observations)
    return marks


class Table:
    """Table *name* (its own broker account, the tests' command key) playing the demo through a :class:`Gate`."""

    def __init__(self, directory: Path, port: int, name: str = "t1") -> None:
        config = load_config(write_config(directory / name, port, table=name, **user(f"table-{name}")))
        self.service = Service(config).start()
        self.gate = Gate(script())
        self.service.feed_from(self.gate)
        self._stop = threading.Event()
        self._runner = threading.Thread(target=self.service.run, kwargs={"until_source_ends": False,
                                                                          "stop": self._stop}, daemon=True)
        self._runner.start()

    def close(self) -> None:
        self.gate.close()
        self._stop.set()
        self._runner.join(10)
        self.service.close()


class Client:
    """One browser's worth of HTTP: its cookies, its CSRF token once logged in."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = ""

    def request(self, path: str, body: Any = None, *, form: dict[str, str] | None = None,
                csrf: str | None = None, timeout: float = 15.0) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON or text, headers) of GET *path*, or POST *body* (JSON) / *form*."""
        headers = {}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
        elif body is not None:
            data = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", "X-CSRF-Token": self.csrf if csrf is None else csrf}
        req = urllib.request.Request(self.url + path, data=data, headers=headers)
        try:
            with self.opener.open(req, timeout=timeout) as r:
                status, raw, got = r.status, r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as exc:
            status, raw, got = exc.code, exc.read().decode(), dict(exc.headers)
        try:
            return status, json.loads(raw), got
        except ValueError:
            return status, raw, got

    def login(self, name: str, secret: str | None = None) -> int:
        status, page, _ = self.request("/login")
        token = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        status, _, _ = self.request("/login", form={"username": name, "password": secret or password(name),
                                                     "csrf": token})
        if status == 200:
            self.csrf = self.request("/api/me")[1]["csrf"]
        return status

    def stream(self, seconds: float) -> list[tuple[str, Any]]:
        """The event stream's (event, data) pairs received within *seconds*."""
        req = urllib.request.Request(self.url + "/api/stream")
        out: list[tuple[str, Any]] = []
        deadline = time.monotonic() + seconds
        try:
            with self.opener.open(req, timeout=seconds) as r:
                name = ""
                while time.monotonic() < deadline:
                    line = r.readline().decode()
                    if line.startswith("event: "):
                        name = line[7:].strip()
                    elif line.startswith("data: "):
                        out.append((name, json.loads(line[6:])))
        except (TimeoutError, OSError):
            pass
        return out


def wait_for(predicate: Any, timeout: float = 30.0, step: float = 0.2) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()
