"""systemd's notify protocol and watchdog (issue 17), against real Unix datagram sockets."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from firmware_host.service.notify import Liveness, Notifier, Supervisor
from mqtt_helpers import Broker, write_config

TABLECTL = Path(sys.executable).with_name("tablectl")


class SystemdSocket:
    """The socket systemd listens on for a service's notifications: a real Unix datagram socket."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.1)
        self.messages: list[dict[str, str]] = []

    def read(self, seconds: float) -> list[dict[str, str]]:
        """Every datagram received within *seconds*, each as its KEY=value fields."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            self.messages.append(dict(line.split("=", 1) for line in data.decode().splitlines()))
        return self.messages

    def drain(self) -> None:
        """Receive what is queued, without waiting (systemd reads its socket at once)."""
        while True:
            try:
                data = self.sock.recv(4096, socket.MSG_DONTWAIT)
            except (BlockingIOError, TimeoutError):
                return
            self.messages.append(dict(line.split("=", 1) for line in data.decode().splitlines()))

    def wait_for(self, key: str, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(key in m for m in self.read(0.2)):
                return True
        return False

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def systemd(tmp_path):
    sock = SystemdSocket(tmp_path / "notify")
    yield sock
    sock.close()


def test_ready_status_stopping_reach_the_socket(systemd):
    with Notifier(systemd.path) as notifier:
        assert notifier.ready("running") and notifier.status("busy") and notifier.stopping()
    got = systemd.read(0.3)
    assert got[0]["READY"] == "1" and got[0]["STATUS"] == "running" and got[0]["MAINPID"] == str(os.getpid())
    assert got[1] == {"STATUS": "busy"} and got[2]["STOPPING"] == "1"


def test_an_abstract_socket_address_is_understood():
    name = f"tablectl-test-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind("\0" + name)
    server.settimeout(2)
    try:
        with Notifier("@" + name) as notifier:
            assert notifier.send("READY=1")
        assert server.recv(100) == b"READY=1"
    finally:
        server.close()


def test_a_full_socket_drops_rather_than_blocks_the_loop(systemd):
    """A systemd that does not read (its queue holds a handful of datagrams) never stalls the service."""
    with Notifier(systemd.path) as notifier:
        start = time.monotonic()
        results = [notifier.status(f"n{i}") for i in range(500)]
        assert time.monotonic() - start < 2
    assert not all(results) and notifier.dropped == results.count(False) > 0
    assert len(systemd.read(0.3)) == notifier.sent


def test_outside_systemd_nothing_is_sent_and_nothing_fails():
    notifier = Notifier.from_env({})
    assert not notifier.enabled and not notifier.ready("x") and not notifier.watchdog()


def test_a_watchdog_meant_for_another_process_is_not_pinged(systemd):
    env = {"NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid() + 1)}
    assert Notifier.from_env(env).interval is None
    env["WATCHDOG_PID"] = str(os.getpid())
    assert Notifier.from_env(env).interval == 1.0


def test_pings_come_every_half_period_at_most(systemd):
    now = [0.0]
    notifier = Notifier(systemd.path, watchdog_usec=2_000_000, clock=lambda: now[0])
    pinged = []
    for step in range(40):                  # 4 s of loop turns, every 0.1 s
        now[0] = step / 10
        pinged.append(notifier.watchdog())
    assert sum(pinged) == 4                 # at 0, 1, 2, 3 s: half of WATCHDOG_USEC
    assert sum("WATCHDOG" in m for m in systemd.read(0.3)) == 4


def test_ready_waits_for_the_broker(systemd):
    connected = threading.Event()
    supervisor = Supervisor(Notifier(systemd.path, watchdog_usec=200_000), connected.is_set)
    supervisor.turn()
    assert not supervisor.ready and not any("READY" in m for m in systemd.read(0.2))
    connected.set()
    supervisor.turn()
    assert supervisor.ready and any("READY" in m for m in systemd.read(0.2))


def test_a_hung_device_thread_stops_the_pings(systemd):
    """A driver's loop that stops turning (a read that never returns) stops the watchdog's pings,
    while the service's own loop still turns: systemd then restarts the service."""
    liveness = Liveness(stall=0.5)
    hang = threading.Event()
    release = threading.Event()

    def driver() -> None:               # a device thread: beats at each turn, until a read hangs
        while not release.is_set():
            liveness.beat("shoe")
            if hang.is_set():
                release.wait()          # the read that never returns
            time.sleep(0.02)

    thread = threading.Thread(target=driver, daemon=True)
    thread.start()
    supervisor = Supervisor(Notifier(systemd.path, watchdog_usec=100_000), lambda: True, liveness.stalled)

    def loop(seconds: float) -> int:    # the service's loop turning; returns the pings it made
        before = supervisor.notifier.sent
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            supervisor.turn()
            systemd.drain()
            time.sleep(0.01)
        return supervisor.notifier.sent - before

    try:
        assert loop(1.0) >= 10                          # pinged every 50 ms while the driver turns
        hang.set()
        time.sleep(0.6)                                 # the stall limit passes
        assert loop(1.0) <= 1                           # at most the status line: no ping
        got = systemd.read(0.3)
        assert {"STATUS": "stalled: shoe"} in got
    finally:
        release.set()
        thread.join(2)


def test_run_under_systemd_says_ready_pings_and_says_stopping(tmp_path, systemd):
    """`tablectl run` as systemd runs it (Type=notify, WatchdogSec): READY once the broker is connected,
    WATCHDOG=1 pings from the main loop, STOPPING=1 on SIGTERM."""
    broker = Broker(tmp_path / "broker").start()
    config = write_config(tmp_path / "c", broker.port)
    env = {**os.environ, "NOTIFY_SOCKET": systemd.path, "WATCHDOG_USEC": "1000000"}
    cmd = [str(TABLECTL), "run", "--config", str(config), "--source", "demo", "--speed", "1", "--loops", "0"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert systemd.wait_for("READY", 30), proc.stderr
        systemd.read(2.0)
        pings = sum("WATCHDOG" in m for m in systemd.messages)
        assert pings >= 3                               # every 0.5 s
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        assert any("STOPPING" in m for m in systemd.read(0.3))
    finally:
        if proc.poll() is None:
            proc.kill()
        broker.stop()


def test_a_hung_engine_stops_the_pings(tmp_path, systemd):
    """The pings come from the service's own loop: when handling an observation never returns (a hung
    engine), they stop, though every other thread (paho's, the publisher's) runs on."""
    from firmware_host.service.config import load_config
    from firmware_host.service.service import Service, demo_source

    broker = Broker(tmp_path / "broker").start()
    service = Service(load_config(write_config(tmp_path / "c", broker.port))).start()
    hang, hung, release, stop = threading.Event(), threading.Event(), threading.Event(), threading.Event()
    feed = service._feed

    def hanging(obs, replaying=False):
        if hang.is_set():
            hung.set()
            release.wait()                              # the engine call that never returns
        return feed(obs, replaying)

    service._feed = hanging
    supervisor = Supervisor(Notifier(systemd.path, watchdog_usec=200_000), service.publisher.connected.is_set)
    service.feed_from(demo_source(1.0))                 # real time: an observation every second or so
    loop = threading.Thread(target=service.run, kwargs={"stop": stop, "turn": supervisor.turn}, daemon=True)
    loop.start()
    try:
        assert systemd.wait_for("READY", 10)
        systemd.read(1.0)
        assert sum("WATCHDOG" in m for m in systemd.messages) >= 5     # every 0.1 s while it turns
        hang.set()
        assert hung.wait(15)                            # the next observation arrives and hangs the loop
        time.sleep(0.3)
        before = sum("WATCHDOG" in m for m in systemd.read(0.2))
        after = sum("WATCHDOG" in m for m in systemd.read(1.5))
        assert after == before                          # no ping while the loop is stuck
        assert service.publisher.connected.is_set()     # the other threads are alive
        release.set()
        hang.clear()
        assert sum("WATCHDOG" in m for m in systemd.read(1.0)) > after  # turning again: pings again
    finally:
        release.set()
        stop.set()
        loop.join(5)
        service.close()
        broker.stop()
