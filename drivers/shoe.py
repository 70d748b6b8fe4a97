"""The RFID card shoe: USB-serial frames become observations.

The wire protocol is ``hardware/shoe-protocol.md``. Three layers:

* :class:`FrameDecoder` -- pure: bytes in, decoded :class:`Frame` objects out,
  bad input counted (``crc_errors``, ``framing_errors``, ``malformed``).
* :class:`ShoeSession` -- pure: frames and clock ticks in, observations and ack
  bytes out (sequence numbers, duplicates, gaps, heartbeat timeout, deck lookup).
* Backends (thin shells): :class:`Shoe` reads a serial port (a tty path or any
  pyserial URL) in a thread; :class:`ShoeReplay` replays recorded ``(t, bytes)``.

Observations are delivered by :class:`Shoe` to ``on_observation(obs)`` when given
(called from the reader thread), otherwise queued: ``shoe.get(timeout)`` or
``for obs in shoe`` (ends when the shoe is closed)::

    with Shoe("/dev/ttyACM0", registry) as shoe:
        for obs in shoe:
            engine.feed(obs)
"""
from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from calibration.deck import Lookup
from firmware_host.observations import (
    CardEntered,
    DeviceFault,
    DeviceRecovered,
    ForeignCard,
    Observation,
    WrongBackCard,
)

if TYPE_CHECKING:
    from serial import SerialBase

log = logging.getLogger(__name__)

DEVICE = "shoe"
BAUDRATE = 115200
HEARTBEAT_TIMEOUT = 3.0
MAX_FRAME = 32          # decoded bytes: type, seq, body, CRC
MAX_PENDING = 64        # bytes without a delimiter before the decoder gives up on them

HELLO, HEARTBEAT, DRAW, FAULT, ACK = 0x01, 0x02, 0x03, 0x04, 0x81
RELIABLE = (HELLO, DRAW, FAULT)
FAULT_CODES = {
    0x01: "reader-error", 0x02: "antenna-open", 0x03: "optical-sensor-error",
    0x04: "card-jam", 0x05: "queue-overflow", 0x06: "low-voltage",
}
FACE = {0: None, 1: False, 2: True}


# -- CRC and COBS --------------------------------------------------------------

def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected): ``crc16(b"123456789") == 0x29B1``."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode *data* (no delimiter added)."""
    out = bytearray(b"\x00")
    code_at, code = 0, 1
    for byte in data:
        if byte:
            out.append(byte)
            code += 1
        if not byte or code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Decode one COBS frame (without its delimiter); ValueError if it is not valid COBS."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        end = i + code
        if end > n:
            raise ValueError(f"COBS block runs past the end ({code} at {i} of {n})")
        out += data[i + 1:end]
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(kind: int, seq: int, body: bytes = b"") -> bytes:
    """A frame as it goes on the wire: COBS(type, seq, body, CRC) then 0x00."""
    raw = bytes((kind, seq & 0xFF)) + body
    return cobs_encode(raw + crc16(raw).to_bytes(2, "big")) + b"\x00"


# -- decoded frames --------------------------------------------------------------

@dataclass(frozen=True)
class Frame:
    """A frame with a good CRC: ``kind`` (type byte), ``seq``, ``body``."""

    kind: int
    seq: int
    body: bytes


class FrameDecoder:
    """Bytes in, frames out; resynchronises on the 0x00 delimiter and counts what it drops.

    ``frames`` counts frames with a good CRC; ``crc_errors`` frames with a bad one;
    ``framing_errors`` invalid COBS, frames too short or too long.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overflow = False
        self.frames = 0
        self.crc_errors = 0
        self.framing_errors = 0

    def feed(self, data: bytes) -> list[Frame]:
        """The frames completed by *data* (possibly none); never raises on bad input."""
        frames = []
        parts = bytes(data).split(b"\x00")
        for index, part in enumerate(parts):
            if index == len(parts) - 1:            # no delimiter yet: keep it
                self._accumulate(part)
                break
            if self._overflow:
                self._overflow = False
                self._pending.clear()
                continue
            encoded = bytes(self._pending) + part
            self._pending.clear()
            if encoded:
                frame = self._frame(encoded)
                if frame is not None:
                    frames.append(frame)
        return frames

    def _accumulate(self, part: bytes) -> None:
        if self._overflow:
            return
        self._pending += part
        if len(self._pending) > MAX_PENDING:
            self.framing_errors += 1
            log.warning("shoe: %d bytes without a frame delimiter: dropped", len(self._pending))
            self._pending.clear()
            self._overflow = True

    def _frame(self, encoded: bytes) -> Frame | None:
        try:
            raw = cobs_decode(encoded)
        except ValueError as exc:
            self.framing_errors += 1
            log.warning("shoe: bad framing (%s): %s", exc, encoded[:40].hex())
            return None
        if not 4 <= len(raw) <= MAX_FRAME:
            self.framing_errors += 1
            log.warning("shoe: frame of %d bytes dropped (4..%d): %s", len(raw), MAX_FRAME, raw[:40].hex())
            return None
        if crc16(raw[:-2]) != int.from_bytes(raw[-2:], "big"):
            self.crc_errors += 1
            log.warning("shoe: CRC error, frame dropped: %s", raw.hex())
            return None
        self.frames += 1
        return Frame(raw[0], raw[1], raw[2:-2])


# -- the protocol session (functional core) ----------------------------------------

class DeckLookup(Protocol):
    """What the session asks of the decks (:class:`calibration.deck.Registry`): what a tag is.

    A registry that also has ``draw(uid)`` is asked that instead: a card drawn from the
    shoe may choose the deck in play (002 C.1).
    """

    def lookup(self, uid: str) -> Lookup: ...


class ShoeSession:
    """The host side of the protocol, without I/O.

    ``feed(data, t)`` returns ``(observations, ack_bytes)``; ``tick(t)`` returns the
    observations due to time passing (heartbeat timeout); ``disconnected`` and
    ``connected`` are called by the backend when the port fails or reopens.
    *registry* has ``draw(uid)`` (or only ``lookup(uid)``; ``calibration.deck.Registry``).
    """

    def __init__(self, registry: DeckLookup, *, heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
                 device: str = DEVICE) -> None:
        if heartbeat_timeout <= 0:
            raise ValueError(f"heartbeat_timeout must be positive, not {heartbeat_timeout!r}")
        self.registry = registry
        self.device = device
        self.heartbeat_timeout = heartbeat_timeout
        self.decoder = FrameDecoder()
        self.hello: dict[str, int | str] | None = None
        self.malformed = self.duplicates = self.gaps = self.reconnects = self.acks_sent = 0
        self.draws = 0
        self._last: tuple[int, int] | None = None        # (type, seq) of the last accepted reliable frame
        self._last_rx: float | None = None
        self._down: str | None = None                    # "heartbeat-timeout" or "disconnected"
        self._ack_seq = 0

    @property
    def counters(self) -> dict[str, int]:
        """Frames decoded and the errors and events counted so far."""
        d = self.decoder
        return {"frames": d.frames, "crc_errors": d.crc_errors, "framing_errors": d.framing_errors,
                "malformed": self.malformed, "duplicates": self.duplicates, "gaps": self.gaps,
                "reconnects": self.reconnects, "draws": self.draws, "acks_sent": self.acks_sent}

    def feed(self, data: bytes, t: float) -> tuple[list[Observation], bytes]:
        """Observations and the acks to send for the bytes *data* received at *t*."""
        observations: list[Observation] = []
        acks = bytearray()
        for frame in self.decoder.feed(data):
            if self._down == "heartbeat-timeout":
                observations.append(DeviceRecovered(t, self.device, "frames again"))
                self._down = None
            self._last_rx = t
            observations += self._frame(frame, t, acks)
        return observations, bytes(acks)

    def tick(self, t: float) -> list[Observation]:
        """The heartbeat timeout, if it has just expired at *t*."""
        if self._down is None:
            if self._last_rx is None:
                self._last_rx = t
            elif t - self._last_rx > self.heartbeat_timeout:
                self._down = "heartbeat-timeout"
                return [DeviceFault(t, self.device, "heartbeat-timeout",
                                    f"no valid frame for {t - self._last_rx:.1f} s")]
        return []

    def disconnected(self, t: float, detail: str) -> list[Observation]:
        """The port failed or vanished (reported once until :meth:`connected`)."""
        if self._down == "disconnected":
            return []
        self._down = "disconnected"
        return [DeviceFault(t, self.device, "disconnected", detail)]

    def connected(self, t: float, detail: str) -> list[Observation]:
        """The port is open (again)."""
        self._last_rx = t
        self._ack_seq = 0
        if self._down == "disconnected":
            self._down = None
            self.reconnects += 1
            return [DeviceRecovered(t, self.device, detail)]
        return []

    def _ack(self, frame: Frame, acks: bytearray) -> None:
        acks += encode_frame(ACK, self._ack_seq, bytes((frame.seq,)))
        self._ack_seq = (self._ack_seq + 1) & 0xFF
        self.acks_sent += 1

    def _frame(self, frame: Frame, t: float, acks: bytearray) -> list[Observation]:
        if frame.kind == HEARTBEAT:
            if len(frame.body) != 5:
                self._malformed(frame, "heartbeat body is not 5 bytes")
            return []
        if frame.kind not in RELIABLE:
            self._malformed(frame, f"unknown frame type 0x{frame.kind:02X}")
            return []
        self._ack(frame, acks)
        key = (frame.kind, frame.seq)
        if key == self._last:
            self.duplicates += 1
            log.info("shoe: duplicate frame type 0x%02X seq %d: acked again, ignored", frame.kind, frame.seq)
            return []
        observations: list[Observation] = []
        last, self._last = self._last, key
        if frame.kind == HELLO:
            if last is not None:
                observations.append(DeviceFault(t, self.device, "possibly-missed-card",
                                                "the shoe restarted: a card in flight may be lost"))
        elif last is not None and frame.seq != (last[1] + 1) & 0xFF:
            missed = (frame.seq - last[1] - 1) & 0xFF
            self.gaps += 1
            log.warning("shoe: sequence gap: %d then %d", last[1], frame.seq)
            observations.append(DeviceFault(t, self.device, "possibly-missed-card",
                                            f"sequence jumped from {last[1]} to {frame.seq}: "
                                            f"{missed} frame(s) missed"))
        handler = {HELLO: self._hello, DRAW: self._draw, FAULT: self._fault}[frame.kind]
        return observations + handler(frame, t)

    def _malformed(self, frame: Frame, why: str) -> None:
        self.malformed += 1
        log.error("shoe: malformed frame (%s): type 0x%02X seq %d body %s", why, frame.kind, frame.seq,
                  frame.body.hex())

    def _hello(self, frame: Frame, t: float) -> list[Observation]:
        body = frame.body
        if len(body) != 8:
            self._malformed(frame, "hello body is not 8 bytes")
            return []
        self.hello = {"protocol": body[0], "firmware": f"{body[1]}.{body[2]}.{body[3]}",
                      "shoe_id": int.from_bytes(body[4:8], "big")}
        log.info("shoe: hello %s", self.hello)
        if body[0] != 1:
            log.warning("shoe: protocol version %d, this host speaks 1", body[0])
        return []

    def _draw(self, frame: Frame, t: float) -> list[Observation]:
        body = frame.body
        n = body[0] if body else -1
        if n not in (0, 4, 7) or len(body) != n + 2 or body[-1] not in FACE:
            self._malformed(frame, "bad draw body")
            return [DeviceFault(t, self.device, "possibly-missed-card",
                                f"malformed draw frame seq {frame.seq}: {body.hex()}")]
        self.draws += 1
        face = FACE[body[-1]]
        if n == 0:
            return [DeviceFault(t, self.device, "unreadable-card", "a card left the shoe but no tag was read")]
        uid = body[1:1 + n].hex().upper()
        try:
            return [self._identify(uid, t, face)]
        except Exception as exc:    # noqa: BLE001 -- the registry is another module: its bug must not stop us
            log.exception("shoe: deck lookup of %s failed", uid)
            return [DeviceFault(t, self.device, "bad-lookup", f"{uid}: {exc}")]

    def _identify(self, uid: str, t: float, face: bool | None) -> Observation:
        """The card drawn, by the registry's answer for tag *uid*; ValueError for an answer that is none."""
        registry = self.registry
        found: Lookup = registry.draw(uid) if hasattr(registry, "draw") else registry.lookup(uid)
        if found.kind == "foreign":
            return ForeignCard(t, self.device, uid)
        if found.kind == "card" and found.card is not None:
            return CardEntered(t, self.device, found.card, face)
        if found.kind == "wrong-back" and found.card is not None and found.deck is not None:
            return WrongBackCard(t, self.device, found.card, found.deck)
        raise ValueError(f"lookup gave {found!r}")

    def _fault(self, frame: Frame, t: float) -> list[Observation]:
        body = frame.body
        if len(body) != 2 or body[1] not in (0, 1):
            self._malformed(frame, "bad fault body")
            return []
        name = FAULT_CODES.get(body[0], f"shoe-fault-0x{body[0]:02X}")
        if body[1]:
            return [DeviceFault(t, self.device, name, "reported by the shoe")]
        return [DeviceRecovered(t, self.device, f"{name} cleared")]


# -- backends (thin shells) ----------------------------------------------------------

Chunk = tuple[float, bytes]
"""A recorded read: the time it was read and the bytes (``b""``: only the clock moved)."""


class _Delivery:
    """Observations to a callback, or to a queue read by ``get()`` / iteration."""

    def __init__(self, on_observation: Callable[[Observation], None] | None) -> None:
        self._callback = on_observation
        self._queue: queue.Queue[Observation] = queue.Queue()
        self._closed = threading.Event()

    def deliver(self, observations: Iterable[Observation]) -> None:
        for obs in observations:
            if self._callback is not None:
                try:
                    self._callback(obs)
                except Exception:   # a consumer's bug must not stop the driver
                    log.exception("shoe: on_observation raised")
            else:
                self._queue.put(obs)

    def get(self, timeout: float | None = None) -> Observation:
        """The next observation; ``queue.Empty`` after *timeout* seconds."""
        return self._queue.get(timeout=timeout)

    def __iter__(self) -> Iterator[Observation]:
        while not (self._closed.is_set() and self._queue.empty()):
            try:
                yield self._queue.get(timeout=0.1)
            except queue.Empty:
                continue


class Shoe(_Delivery):
    """The shoe on a serial port: *port* is a tty path or a pyserial URL (``serial_for_url``).

    A reader thread (started at construction) reads, acks draws and delivers
    observations. A port that fails or vanishes is reported (``disconnected``) and
    reopened with back-off (0.1 s doubling to 2 s), then ``DeviceRecovered``.
    *recorder*, if given, is called with each ``(t, bytes)`` read (and ``(t, b"")``
    when only the clock produced an observation), the input of :class:`ShoeReplay`.
    """

    def __init__(self, port: str, registry: DeckLookup, *, baudrate: int = BAUDRATE,
                 on_observation: Callable[[Observation], None] | None = None,
                 clock: Callable[[], float] = time.monotonic, heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
                 backoff: tuple[float, float] = (0.1, 2.0), read_timeout: float = 0.05,
                 recorder: Callable[[float, bytes], None] | None = None) -> None:
        if not isinstance(baudrate, int) or baudrate <= 0:
            raise ValueError(f"baudrate must be a positive integer, not {baudrate!r}")
        if not 0 < backoff[0] <= backoff[1]:
            raise ValueError(f"backoff must be (first, max) with 0 < first <= max, not {backoff!r}")
        super().__init__(on_observation)
        self.port_name = port
        self.baudrate = baudrate
        self.session = ShoeSession(registry, heartbeat_timeout=heartbeat_timeout)
        self._clock = clock
        self._backoff = backoff
        self._read_timeout = read_timeout
        self._recorder = recorder
        self._serial: SerialBase | None = None
        self._lock = threading.Lock()
        self.turned = time.monotonic()
        """When the reader thread last turned its loop (``time.monotonic``): a stuck thread stops turning."""
        self._thread = threading.Thread(target=self._run, name=f"shoe:{port}", daemon=True)
        self._thread.start()

    @property
    def counters(self) -> dict[str, int]:
        """``frames``, ``crc_errors``, ``framing_errors``, ``malformed``, ``duplicates``, ``gaps``,
        ``reconnects``, ``draws``, ``acks_sent``."""
        with self._lock:
            return self.session.counters

    @property
    def connected(self) -> bool:
        return self._serial is not None

    def close(self) -> None:
        """Stop the reader thread and close the port (idempotent)."""
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def __enter__(self) -> Shoe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> SerialBase:
        import serial
        return serial.serial_for_url(self.port_name, baudrate=self.baudrate, timeout=self._read_timeout,
                                     write_timeout=0.5)

    def _run(self) -> None:
        import serial
        delay, next_try = self._backoff[0], 0.0
        try:
            while not self._closed.is_set():
                self.turned = time.monotonic()
                if self._serial is None:
                    now = self._clock()
                    if now < next_try:
                        self._closed.wait(min(next_try - now, 0.05))
                        continue
                    try:
                        self._serial = self._open()
                    except (serial.SerialException, OSError, ValueError) as exc:
                        with self._lock:
                            obs = self.session.disconnected(self._clock(), f"cannot open {self.port_name}: {exc}")
                        if obs:
                            log.warning("shoe: cannot open %s: %s", self.port_name, exc)
                        self.deliver(obs)
                        next_try, delay = self._clock() + delay, min(delay * 2, self._backoff[1])
                        continue
                    delay = self._backoff[0]
                    log.info("shoe: opened %s", self.port_name)
                    t = self._clock()
                    with self._lock:
                        obs = self.session.connected(t, f"opened {self.port_name}")
                    if self._recorder is not None:      # the clock's start, for the replay's heartbeat timer
                        self._recorder(t, b"")
                    self.deliver(obs)
                    continue
                try:
                    self._step(self._serial)
                except Exception as exc:    # noqa: BLE001 -- sorted below; nothing may kill the reader
                    if not isinstance(exc, (serial.SerialException, OSError)):
                        log.exception("shoe: internal error, the bytes read were dropped")
                        self._closed.wait(0.01)
                        continue
                    log.warning("shoe: %s failed: %s", self.port_name, exc)
                    self._close_port()
                    with self._lock:
                        obs = self.session.disconnected(self._clock(), f"{self.port_name}: {exc}")
                    self.deliver(obs)
                    next_try = self._clock() + delay
                    delay = min(delay * 2, self._backoff[1])
        finally:
            self._close_port()

    def _step(self, port: SerialBase) -> None:
        data = port.read(port.in_waiting or 1)
        t = self._clock()
        with self._lock:
            obs = self.session.tick(t)
            acks = b""
            if data:
                more, acks = self.session.feed(data, t)
                obs += more
        if self._recorder is not None and (data or obs):
            self._recorder(t, bytes(data))
        if acks:
            port.write(acks)
        self.deliver(obs)

    def _close_port(self) -> None:
        port, self._serial = self._serial, None
        if port is not None:
            try:
                port.close()
            except Exception:   # closing a vanished port may fail; it is gone either way
                log.debug("shoe: error closing %s", self.port_name, exc_info=True)


class ShoeReplay:
    """Recorded reads ``(t, bytes)`` replayed through the same session: same observations as live.

    Iterate it for the observations. Port failures are not part of this simple
    record format (``list[(t, bytes)]``); acks are computed and discarded.
    """

    def __init__(self, chunks: Iterable[Chunk], registry: DeckLookup, *,
                 heartbeat_timeout: float = HEARTBEAT_TIMEOUT) -> None:
        self._chunks = chunks
        self.session = ShoeSession(registry, heartbeat_timeout=heartbeat_timeout)
        self._closed = False

    @property
    def counters(self) -> dict[str, int]:
        return self.session.counters

    def __iter__(self) -> Iterator[Observation]:
        for t, data in self._chunks:
            if self._closed:
                return
            yield from self.session.tick(t)
            if data:
                yield from self.session.feed(data, t)[0]

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> ShoeReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def save_chunks(path: str | Path, chunks: Iterable[Chunk]) -> None:
    """Write recorded reads as JSON lines ``{"t": ..., "hex": ...}`` (the interim record format)."""
    with open(path, "w", encoding="utf-8") as fp:
        for t, data in chunks:
            fp.write(json.dumps({"t": t, "hex": data.hex()}) + "\n")


def load_chunks(path: str | Path) -> list[Chunk]:
    """Read what :func:`save_chunks` wrote; ValueError naming the file and line if it is not that."""
    chunks: list[Chunk] = []
    with open(path, encoding="utf-8") as fp:
        for number, line in enumerate(fp, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                chunks.append((float(item["t"]), bytes.fromhex(item["hex"])))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a recorded read ({exc})") from None
    return chunks
