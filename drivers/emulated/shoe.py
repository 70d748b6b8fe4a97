"""A simulated RFID shoe, written from ``hardware/shoe-protocol.md`` (it shares no code with
``drivers/shoe.py``, so each checks the other).

It runs the shoe side of the protocol on a file descriptor (the master end of a pty)
or a serial port: ``hello`` at start, a heartbeat every second, draws queued and sent
stop-and-wait (resent every 250 ms until acked), faults; and it can misbehave on
request: garbage, a bit flip or truncation of the next frame, a duplicate, a gap in
sequence numbers, silence::

    master, slave = os.openpty()
    with SimShoe(master) as shoe:            # the driver opens os.ttyname(slave)
        shoe.draw("04A1B2C3D4E5F6", face="up")
        shoe.wait_acked()
"""
from __future__ import annotations

import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)

T_HELLO, T_HEARTBEAT, T_DRAW, T_FAULT, T_ACK = 1, 2, 3, 4, 0x81
Face = str | bool | None
"""How a card left the shoe: ``unknown``/``down``/``up`` (or None/False/True)."""
FACES: dict[Face, int] = {"unknown": 0, None: 0, "down": 1, False: 1, "up": 2, True: 2}
FAULTS = {"reader-error": 1, "antenna-open": 2, "optical-sensor-error": 3, "card-jam": 4,
          "queue-overflow": 5, "low-voltage": 6}


def crc_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, bit by bit as in the spec's C code."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs(data: bytes) -> bytes:
    """COBS by splitting at the zeros (each run of up to 254 non-zero bytes gets its length + 1)."""
    out = bytearray()
    for run in data.split(b"\x00"):
        while len(run) >= 254:
            out += b"\xff" + run[:254]
            run = run[254:]
        out += bytes((len(run) + 1,)) + run
    return bytes(out)


def frame(kind: int, seq: int, body: bytes = b"") -> bytes:
    """One frame on the wire: COBS(type seq body crc_hi crc_lo) 0x00."""
    raw = bytes((kind, seq % 256)) + body
    crc = crc_ccitt_false(raw)
    return cobs(raw + bytes((crc >> 8, crc & 0xFF))) + b"\x00"


def unframe(wire: bytes | bytearray) -> tuple[int, int, bytes] | None:
    """(type, seq, body) of one wire frame without its delimiter, or None if it is not valid."""
    raw, i = bytearray(), 0
    while i < len(wire):
        code = wire[i]
        if code == 0 or i + code > len(wire):
            return None
        raw += wire[i + 1:i + code]
        i += code
        if code != 0xFF and i < len(wire):
            raw.append(0)
    if len(raw) < 4 or crc_ccitt_false(bytes(raw[:-2])) != (raw[-2] << 8 | raw[-1]):
        return None
    return raw[0], raw[1], bytes(raw[2:-2])


def draw_body(uid: bytes | str | None, face: Face = "unknown") -> bytes:
    """The body of a draw: *uid* (bytes or hex; None or b"" for an unreadable card) and the face flag."""
    uid = bytes.fromhex(uid) if isinstance(uid, str) else (uid or b"")
    if len(uid) not in (0, 4, 7):
        raise ValueError(f"a tag UID is 4 or 7 bytes, not {len(uid)}")
    return bytes((len(uid),)) + uid + bytes((FACES[face],))


class _FdLink:
    def __init__(self, fd: int):
        self.fd = fd
        os.set_blocking(fd, False)     # a full line drops bytes, as a UART does; it never stalls the shoe

    def write(self, data: bytes) -> None:
        try:
            os.write(self.fd, data)
        except OSError:       # no host reading, or no host at all: the bytes are lost, as on a real line
            pass

    def read(self, timeout: float) -> bytes:
        try:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            return os.read(self.fd, 4096) if ready else b""
        except BlockingIOError:
            return b""
        except OSError:       # pty master with no slave open: EIO
            time.sleep(timeout)
            return b""

    def close(self) -> None:
        pass


class _SerialLink:
    def __init__(self, url: str, baudrate: int):
        import serial
        self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=0)

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def read(self, timeout: float) -> bytes:
        self.port.timeout = timeout
        return bytes(self.port.read(max(1, self.port.in_waiting)))

    def close(self) -> None:
        self.port.close()


class SimShoe:
    """The shoe side of the protocol on *link*: an open file descriptor (the pty master, not
    closed by the simulator) or a serial port path/URL. Starts running at once; ``close()`` stops it.

    *on_sent* (if given) is called with ``(kind, seq, t)`` after each frame is written.
    """

    def __init__(self, link: int | str, *, shoe_id: int = 0x1234, firmware: tuple[int, int, int] = (1, 2, 3),
                 heartbeat: float = 1.0,
                 resend: float = 0.25, baudrate: int = 115200, hello: bool = True,
                 clock: Callable[[], float] = time.monotonic,
                 on_sent: Callable[[int, int, float], None] | None = None):
        self._link = _FdLink(link) if isinstance(link, int) else _SerialLink(link, baudrate)
        self.shoe_id, self.firmware = shoe_id, firmware
        self.heartbeat, self.resend = heartbeat, resend
        self._clock, self._on_sent = clock, on_sent
        self._lock = threading.Lock()
        self._queue: deque[tuple[int, bytes]] = deque()
        self._inflight: tuple[int, int, bytes] | None = None      # (kind, seq, body)
        self._seq = -1             # the seq of the last reliable frame (hello takes 0)
        self._sent_at = 0.0
        self._next_heartbeat = 0.0
        self._mangle: deque[str] = deque()      # "flip", "truncate", "duplicate" for the next frames
        self._garbage = bytearray()
        self._silent_until = 0.0
        self._start = clock()
        self.acks: list[int] = []              # acked seqs, in order received
        self.sent = 0
        self._idle = threading.Condition(self._lock)
        self._stop = threading.Event()
        if hello:
            self._queue.append((T_HELLO, bytes((1, *firmware)) + shoe_id.to_bytes(4, "big")))
        self._thread = threading.Thread(target=self._run, name="shoe-sim", daemon=True)
        self._thread.start()

    # -- what the test or demo asks of the shoe ----------------------------------------

    def draw(self, uid: bytes | str | None, face: Face = "unknown") -> None:
        """A card leaves the shoe: queue its draw (``face``: unknown/down/up)."""
        body = draw_body(uid, face)
        with self._lock:
            self._queue.append((T_DRAW, body))

    def fault(self, name: str | int, raised: bool = True) -> None:
        """Queue a ``fault`` frame (a name of the spec's table, or a code)."""
        code = FAULTS[name] if isinstance(name, str) else name
        with self._lock:
            self._queue.append((T_FAULT, bytes((code, int(raised)))))

    def garbage(self, data: bytes) -> None:
        """Send *data* raw, before the next frame."""
        with self._lock:
            self._garbage += data

    def corrupt_next(self, how: str) -> None:
        """Spoil the next frame sent: ``flip`` (one bit of its content), ``truncate`` (cut in
        half, delimiter lost) or ``duplicate`` (sent twice)."""
        if how not in ("flip", "truncate", "duplicate"):
            raise ValueError(f"corrupt_next: unknown way {how!r}")
        with self._lock:
            self._mangle.append(how)

    def skip(self, count: int = 1) -> None:
        """Skip *count* sequence numbers (a lost draw, as after a queue overflow)."""
        with self._lock:
            self._seq += count

    def silence(self, seconds: float) -> None:
        """Send nothing at all (no heartbeat, no resend) for *seconds*."""
        with self._lock:
            self._silent_until = self._clock() + seconds

    def wait_acked(self, timeout: float = 5.0) -> bool:
        """Wait until every queued reliable frame has been acked; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._queue and self._inflight is None, timeout)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + (self._inflight is not None)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._link.close()

    def __enter__(self) -> SimShoe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the firmware loop -----------------------------------------------------------------

    def _run(self) -> None:
        rx = bytearray()
        while not self._stop.is_set():
            rx += self._link.read(0.005)
            *complete, rest = rx.split(b"\x00")
            rx = bytearray(rest)
            for wire in complete:
                got = unframe(wire) if wire else None
                if got and got[0] == T_ACK and len(got[2]) == 1:
                    self._acked(got[2][0])
            with self._lock:
                now = self._clock()
                if now < self._silent_until:
                    continue
                if self._inflight is None and self._queue:
                    kind, body = self._queue.popleft()
                    self._seq = 0 if kind == T_HELLO else (self._seq + 1) % 256
                    self._inflight = (kind, self._seq, body)
                    self._send(*self._inflight)
                elif self._inflight is not None and now - self._sent_at >= self.resend:
                    self._send(*self._inflight)
                if now >= self._next_heartbeat:
                    self._next_heartbeat = now + self.heartbeat
                    uptime = int((now - self._start) * 1000) % 2 ** 32
                    self._send(T_HEARTBEAT, max(self._seq, 0) % 256,
                               uptime.to_bytes(4, "big") + bytes((min(255, self._pending_locked()),)))

    def _pending_locked(self) -> int:
        return len(self._queue) + (self._inflight is not None)

    def _acked(self, seq: int) -> None:
        with self._lock:
            self.acks.append(seq)
            if self._inflight is not None and self._inflight[1] == seq:
                self._inflight = None
                self._idle.notify_all()

    def _send(self, kind: int, seq: int, body: bytes) -> None:
        wire = frame(kind, seq, body)
        if kind != T_HEARTBEAT:
            self._sent_at = self._clock()
        if self._garbage:
            self._link.write(bytes(self._garbage))
            self._garbage.clear()
        how = self._mangle.popleft() if self._mangle else None
        if how == "flip":
            spoilt = bytearray(wire)
            spoilt[len(wire) // 2] ^= 0x10 if spoilt[len(wire) // 2] != 0x10 else 0x01
            wire = bytes(spoilt)
        elif how == "truncate":
            wire = wire[: len(wire) // 2]
        elif how == "duplicate":
            wire = wire + wire
        self._link.write(wire)
        self.sent += 1
        if self._on_sent is not None:
            self._on_sent(kind, seq, self._clock())
