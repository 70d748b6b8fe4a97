"""systemd's notify protocol, and the liveness the watchdog pings stand for.

Under ``Type=notify`` systemd passes ``$NOTIFY_SOCKET``: a Unix datagram socket to
which the service writes ``READY=1`` once it serves, ``WATCHDOG=1`` at least every
half ``$WATCHDOG_USEC``, ``STATUS=...`` for ``systemctl status`` and ``STOPPING=1``
(sd_notify(3)). A datagram is all it takes: no dependency. Outside systemd there is
no socket and every call does nothing.

The pings are only as honest as what they stand for: :class:`Liveness` says which
thread stopped turning, and the service pings only while its own loop turns and
no device thread is stalled, so a hung engine or a stuck driver stops the pings
and systemd restarts the service.

>>> beats = Liveness(stall=5.0)
>>> beats.beat("shoe", now=100.0)
>>> beats.stalled(now=103.0), beats.stalled(now=106.0)
([], ['shoe'])
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Datagrams to systemd's ``$NOTIFY_SOCKET``; does nothing when there is none.

    *watchdog_usec* is systemd's ``$WATCHDOG_USEC``: :meth:`watchdog` pings at most
    every half of it (none without it).
    """

    def __init__(self, address: str | None, watchdog_usec: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.address = address
        self.interval = watchdog_usec / 2e6 if watchdog_usec else None
        self._clock = clock
        self._last_ping = float("-inf")
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self.sent = 0
        self.dropped = 0
        if address:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd asked for in *environ* (``os.environ``). ``$WATCHDOG_PID``, when set,
        must be this process: a watchdog meant for another process is not ours to ping."""
        env = os.environ if environ is None else environ
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        mine = not pid or (pid.isdigit() and int(pid) == os.getpid())
        return cls(env.get("NOTIFY_SOCKET") or None, int(usec) if usec.isdigit() and mine else None)

    @property
    def enabled(self) -> bool:
        return self._sock is not None

    def send(self, *fields: str) -> bool:
        """Send ``KEY=value`` *fields* as one datagram; False (logged, counted) if systemd cannot be told.

        Never blocks: the service's loop must not wait on systemd, so a full socket drops the datagram."""
        if self._sock is None or self.address is None:
            return False
        address = "\0" + self.address[1:] if self.address.startswith("@") else self.address   # abstract socket
        message = "\n".join(fields).encode()
        with self._lock:
            try:
                self._sock.sendto(message, socket.MSG_DONTWAIT, address)
            except OSError as exc:
                self.dropped += 1
                log.warning("systemd notify socket %s: %s (%d dropped)", self.address, exc, self.dropped)
                return False
            self.sent += 1
        return True

    def ready(self, status: str) -> bool:
        """The service serves: systemd's start-up is over."""
        return self.send("READY=1", f"STATUS={status}", f"MAINPID={os.getpid()}")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def stopping(self, status: str = "stopping") -> bool:
        return self.send("STOPPING=1", f"STATUS={status}")

    def watchdog(self) -> bool:
        """Ping the watchdog if half its period has passed since the last ping; True if pinged."""
        if self.interval is None:
            return False
        now = self._clock()
        if now - self._last_ping < self.interval:
            return False
        self._last_ping = now
        return self.send("WATCHDOG=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Liveness:
    """When each thread last turned its loop; which of them stopped for longer than *stall* seconds."""

    def __init__(self, stall: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.stall = stall
        self._clock = clock
        self._beats: dict[str, float] = {}

    def beat(self, name: str, now: float | None = None) -> None:
        """Thread *name* turned its loop (now)."""
        self._beats[name] = self._clock() if now is None else now

    def forget(self, name: str) -> None:
        """Thread *name* ended on purpose: it is no longer watched."""
        self._beats.pop(name, None)

    def stalled(self, now: float | None = None) -> list[str]:
        """The threads that have not turned for longer than *stall* seconds, sorted."""
        at = self._clock() if now is None else now
        return sorted(name for name, last in list(self._beats.items()) if at - last > self.stall)


class Supervisor:
    """What the service's loop tells systemd at each turn: READY once *connected()* (the devices are
    open before the loop starts), then watchdog pings while no thread of *stalled()* is stuck."""

    def __init__(self, notifier: Notifier, connected: Callable[[], bool],
                 stalled: Callable[[], list[str]] = lambda: []) -> None:
        self.notifier = notifier
        self._connected = connected
        self._stalled = stalled
        self.ready = False
        self._reported: list[str] = []
        self._waiting = False

    def turn(self) -> None:
        """One turn of the service's loop: it is alive; is everything it depends on?"""
        stalled = self._stalled()
        if stalled != self._reported:
            self._reported = stalled
            if stalled:
                log.error("device thread(s) stalled: %s; the watchdog is no longer pinged", ", ".join(stalled))
                self.notifier.status(f"stalled: {', '.join(stalled)}")
        if stalled:
            return
        if not self.ready:
            if self._connected():
                self.ready = True
                self.notifier.ready("running: devices open, broker connected")
            elif not self._waiting:     # the table plays on (journal, outbox); systemctl status says why
                self._waiting = True
                self.notifier.status("devices open, waiting for the broker")
        self.notifier.watchdog()
