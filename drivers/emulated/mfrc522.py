"""An MFRC522 emulated at register level, with ISO/IEC 14443 A tags on its antenna.

The stand-in for the reader hardware in tests and replays: the real driver
(:mod:`drivers.mfrc522`) talks to it through :class:`EmulatedTransport`
exactly as it talks to spidev. Modelled: the SPI address byte and burst
transfers, the registers the driver uses, the 64-byte FIFO, the commands
Idle, Transmit, Transceive, CalcCRC and SoftReset, the interrupt bits, the
timer (TAuto, TPrescaler, TReload: a REQA with no tag ends with TimerIRq), the
RF field, and tags that follow the ISO/IEC 14443-3 state machine (IDLE, READY,
ACTIVE, HALT): REQA/WUPA, bit-oriented anticollision at cascade levels 1-3
with CT and BCC, SELECT/SAK with CRC_A, HLTA. Several tags answering at once
collide bit by bit (ErrorReg.CollErr, CollReg.CollPos).

Time is virtual (:class:`VirtualClock`): an SPI transfer lasts
``bytes * 8 / speed_hz`` (+ an optional per-transfer overhead), a frame on air
lasts its bits at 106 kbit/s (128/fc each) plus the frame delay time.

>>> clock = VirtualClock()
>>> chip = MFRC522Emulator(clock)
>>> tag = chip.place("04A1B2C3D4E580")
>>> tag.state, tag.cln[0].hex()
('idle', '8804a1b29f')
"""
from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from drivers import mfrc522 as m
from drivers.mfrc522 import bcc, crc_a

__all__ = ["VirtualClock", "EmulatedTag", "MFRC522Emulator", "EmulatedTransport", "FC", "BIT_S", "FDT_S"]

FC = 13.56e6
BIT_S = 128 / FC          # one bit at 106 kbit/s: 9.44 us
FDT_S = 1236 / FC         # frame delay time PCD -> PICC (n = 9, last bit 1): 91.2 us
INJECTABLE = ("parity", "protocol", "crc", "bcc", "silent", "overflow")
INJECTED_ERRORS = {"parity": m.PARITY_ERR, "protocol": m.PROTOCOL_ERR, "overflow": m.BUFFER_OVFL}
"""The ErrorReg bits an injected error sets (the others: no answer, a bad BCC or CRC)."""


class VirtualClock:
    """Seconds of virtual time: call it for the time, :meth:`sleep` to let time pass."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


def _bits(data: bytes, nbits: int | None = None) -> list[int]:
    bits = [(byte >> i) & 1 for byte in data for i in range(8)]
    return bits if nbits is None else bits[:nbits]


def _pack(bits: list[int], align: int = 0) -> bytes:
    out = bytearray((align + len(bits) + 7) // 8)
    for i, bit in enumerate(bits, start=align):
        out[i // 8] |= bit << (i % 8)
    return bytes(out)


@dataclass
class EmulatedTag:
    """One ISO/IEC 14443 A tag: ``uid`` of 4, 7 or 10 bytes; ``sak`` of the last level
    (NTAG/Ultralight 0x00; MIFARE Classic 1K 0x08)."""

    uid: bytes
    sak: int = 0x00
    state: str = "idle"
    from_halt: bool = False
    level: int = 0
    bad_bcc: bool = False
    cln: list[bytes] = field(init=False)

    def __post_init__(self) -> None:
        if len(self.uid) not in (4, 7, 10):
            raise ValueError(f"a UID has 4, 7 or 10 bytes, not {len(self.uid)}")
        parts = [m.CT.to_bytes(1, "big") + self.uid[i:i + 3] for i in range(0, len(self.uid) - 4, 3)]
        parts.append(self.uid[-4:])
        self.cln = [p + bytes((bcc(p),)) for p in parts]

    @property
    def atqa(self) -> bytes:
        """ATQA, low byte first: UID size in bits 7-8, bit frame anticollision bit 3."""
        return bytes(({4: 0x04, 7: 0x44, 10: 0x84}[len(self.uid)], 0x00))

    def reset(self) -> None:
        """Power lost: back to IDLE."""
        self.state, self.from_halt, self.level = "idle", False, 0

    def _error(self) -> None:
        self.state, self.level = ("halt" if self.from_halt else "idle"), 0

    def receive(self, frame: bytes, tx_last_bits: int) -> list[int] | None:
        """Process a frame from the reader; return the answer as bits, or None (silent)."""
        if tx_last_bits == 7 and len(frame) == 1:                      # short frame
            if frame[0] == m.WUPA and self.state in ("idle", "halt") or frame[0] == m.REQA and self.state == "idle":
                self.from_halt, self.state, self.level = self.state == "halt", "ready", 0
                return _bits(self.atqa)
            if self.state in ("ready", "active"):
                self._error()
            return None
        if self.state == "active" and frame[:2] == bytes((m.HLTA, 0)) and len(frame) == 4:
            self.state, self.level = "halt", 0
            return None
        if self.state != "ready" or not frame or frame[0] != m.SEL[self.level] or len(frame) < 2:
            if self.state in ("ready", "active"):
                self._error()
            return None
        nvb = frame[1]
        cln = self.cln[self.level]
        if self.bad_bcc:
            cln = cln[:4] + bytes((cln[4] ^ 0xFF,))
        if nvb == 0x70:                                               # SELECT
            if len(frame) != 9 or crc_a(frame[:7]) != frame[7:] or frame[2:7] != self.cln[self.level]:
                self._error()
                return None
            if self.level + 1 < len(self.cln):
                sak, self.level = m.SAK_CASCADE, self.level + 1
            else:
                sak, self.state = self.sak, "active"
            return _bits(bytes((sak,)) + crc_a(bytes((sak,))))
        known = ((nvb >> 4) - 2) * 8 + (nvb & 0x0F)                  # ANTICOLLISION
        if not 0 <= known < 40 or nvb >> 4 < 2:
            self._error()
            return None
        mine = _bits(cln)
        if _bits(frame[2:], known) != mine[:known]:
            return None                                               # not me: stay READY, silent
        return mine[known:]


@dataclass
class _Pending:
    done_at: float
    irq: int
    fifo: bytes = b""
    error: int = 0
    coll: int = 0
    last_bits: int = 0


class MFRC522Emulator:
    """The chip: registers, FIFO, commands, timer, RF field and the tags on the antenna.

    ``version`` is what VersionReg reads; ``answering = False`` makes the chip
    dead (MISO reads 0x00). :meth:`inject` queues an error for the next tag
    answer. ``reads`` counts register reads by address.
    """

    def __init__(self, clock: VirtualClock, version: int = 0x92, powerup_s: float = 0.0) -> None:
        self.clock = clock
        self.version = version
        self.powerup_s = powerup_s
        self.answering = True
        self.tags: list[EmulatedTag] = []
        self.reads: Counter[int] = Counter()
        self.air_s = 0.0
        self._injected: deque[str] = deque()
        self._soft_reset()

    # -- the test's side -----------------------------------------------------------------
    def place(self, uid: str | bytes, sak: int | None = None, bad_bcc: bool = False) -> EmulatedTag:
        """Put a tag on the antenna (UID as hex or bytes); it starts IDLE."""
        uid = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
        tag = EmulatedTag(uid, sak if sak is not None else (0x08 if len(uid) == 4 else 0x00), bad_bcc=bad_bcc)
        self.tags.append(tag)
        return tag

    def remove(self, uid: str | bytes) -> None:
        """Take the tag off the antenna."""
        uid = bytes.fromhex(uid) if isinstance(uid, str) else bytes(uid)
        self.tags = [t for t in self.tags if t.uid != uid]

    def clear(self) -> None:
        """Take every tag off."""
        self.tags.clear()

    def inject(self, kind: str, times: int = 1) -> None:
        """Corrupt the next *times* tag answers: ``parity``, ``protocol``, ``overflow``
        (error bits), ``crc`` (SAK's CRC_A flipped), ``bcc`` (BCC flipped), ``silent`` (lost)."""
        if kind not in INJECTABLE:
            raise ValueError(f"unknown error {kind!r}: one of {', '.join(INJECTABLE)}")
        self._injected.extend([kind] * times)

    @property
    def field_on(self) -> bool:
        return bool(self.regs[m.TX_CONTROL] & 0x03)

    @property
    def timer_s(self) -> float | None:
        """The timer's period from TModeReg/TPrescalerReg/TReloadReg; None without TAuto."""
        if not self.regs[m.T_MODE] & m.T_AUTO:
            return None
        prescaler = ((self.regs[m.T_MODE] & 0x0F) << 8) | self.regs[m.T_PRESCALER]
        reload = (self.regs[m.T_RELOAD_H] << 8) | self.regs[m.T_RELOAD_L]
        return (2 * prescaler + 1) * (reload + 1) / FC

    # -- SPI ---------------------------------------------------------------------------------
    def spi(self, data: bytes) -> bytes:
        """One SPI transfer (chip-select held): the bytes the chip sends back."""
        if not self.answering or not data:
            return bytes(len(data))
        if data[0] & 0x80:                    # read: every byte but the last is an address
            out = bytearray(len(data))
            for i, address in enumerate(data[:-1]):
                out[i + 1] = self._read((address >> 1) & 0x3F)
            return bytes(out)
        reg = (data[0] >> 1) & 0x3F
        for value in data[1:]:
            self._write(reg, value)
        return bytes(len(data))

    # -- registers ----------------------------------------------------------------------------
    def _soft_reset(self) -> None:
        self.regs = bytearray(0x40)
        self.regs[m.COMMAND] = 0x20
        self.regs[m.COM_IEN] = 0x80
        self.regs[m.MODE] = 0x3F
        self.regs[m.TX_CONTROL] = 0x80
        self.regs[m.MOD_WIDTH] = 0x26
        self.regs[m.RF_CFG] = 0x48
        self.fifo = bytearray()
        self._pending: _Pending | None = None
        self._powered_at = self.clock() + 40e-6     # PowerDown reads 1 until the oscillator runs
        self._field_at: float | None = None
        for tag in self.tags:
            tag.reset()

    def _update(self) -> None:
        p = self._pending
        if p is not None and self.clock() >= p.done_at:
            self._pending = None
            self.fifo = bytearray(p.fifo)
            self.regs[m.ERROR] |= p.error
            self.regs[m.COLL] = p.coll
            self.regs[m.CONTROL] = (self.regs[m.CONTROL] & ~0x07) | p.last_bits
            self.regs[m.COM_IRQ] |= p.irq
            if p.irq & m.IDLE_IRQ:
                self.regs[m.COMMAND] &= ~0x0F

    def _read(self, reg: int) -> int:
        self.reads[reg] += 1
        self._update()
        if reg == m.FIFO_DATA:
            return self.fifo.pop(0) if self.fifo else 0
        if reg == m.FIFO_LEVEL:
            return len(self.fifo)
        if reg == m.VERSION:
            return self.version
        if reg == m.COMMAND:
            return self.regs[m.COMMAND] | (m.POWER_DOWN if self.clock() < self._powered_at else 0)
        return self.regs[reg]

    def _write(self, reg: int, value: int) -> None:
        self._update()
        if reg == m.COMMAND:
            self._command(value)
        elif reg in (m.COM_IRQ, m.DIV_IRQ):
            bits = value & 0x7F
            self.regs[reg] = (self.regs[reg] | bits) if value & 0x80 else (self.regs[reg] & ~bits)
        elif reg == m.FIFO_DATA:
            if len(self.fifo) >= 64:
                self.regs[m.ERROR] |= m.BUFFER_OVFL
            else:
                self.fifo.append(value)
        elif reg == m.FIFO_LEVEL:
            if value & m.FLUSH:
                self.fifo.clear()
                self.regs[m.ERROR] &= ~m.BUFFER_OVFL
        elif reg == m.BIT_FRAMING:
            self.regs[reg] = value
            if value & m.START_SEND and self.regs[m.COMMAND] & 0x0F == m.CMD_TRANSCEIVE:
                self._send(expect_answer=True)
        elif reg == m.TX_CONTROL:
            was = self.field_on
            self.regs[reg] = value
            if was and not self.field_on:
                for tag in self.tags:
                    tag.reset()
            elif self.field_on and not was:
                self._field_at = self.clock()
        elif reg not in (m.VERSION, m.ERROR, m.COLL, m.STATUS1, m.STATUS2):
            self.regs[reg] = value

    def _command(self, value: int) -> None:
        command = value & 0x0F
        self.regs[m.COMMAND] = value & 0x3F
        if command == m.CMD_SOFT_RESET:
            self._soft_reset()
        elif command == m.CMD_IDLE:
            self._pending = None
        elif command == m.CMD_TRANSMIT:
            self._send(expect_answer=False)
        elif command == m.CMD_CALC_CRC:
            crc = crc_a(bytes(self.fifo))
            self.fifo.clear()
            self.regs[m.CRC_RESULT_L], self.regs[m.CRC_RESULT_H] = crc[0], crc[1]
            self.regs[m.DIV_IRQ] |= m.CRC_IRQ

    def _take(self, frame: bytes) -> str | None:
        """The injected error for this answer: ``bcc`` waits for an anticollision, ``crc`` for a SELECT."""
        if not self._injected:
            return None
        kind = self._injected[0]
        is_select = len(frame) >= 2 and frame[0] in m.SEL and frame[1] == 0x70
        is_anticoll = len(frame) >= 2 and frame[0] in m.SEL and frame[1] != 0x70
        if kind == "crc" and not is_select or kind == "bcc" and not is_anticoll:
            return None
        return self._injected.popleft()

    # -- RF -----------------------------------------------------------------------------------
    def _send(self, expect_answer: bool) -> None:
        frame = bytes(self.fifo)
        self.fifo.clear()
        self.regs[m.ERROR] = 0
        framing = self.regs[m.BIT_FRAMING]
        tx_last, align = framing & 0x07, (framing >> 4) & 0x07
        nbits = (len(frame) - 1) * 8 + (tx_last or 8) if frame else 0
        tx_s = (nbits + nbits // 8 + 2) * BIT_S          # data + parity + start/end
        now = self.clock()
        self.air_s += tx_s
        powered = self.field_on and self._field_at is not None and now - self._field_at >= self.powerup_s
        answers = [a for a in (t.receive(frame, tx_last) for t in self.tags) if a is not None] if powered else []
        if not expect_answer:
            self._pending = _Pending(now + tx_s, m.TX_IRQ | m.IDLE_IRQ)
            return
        injected = self._take(frame) if answers else None
        if injected == "silent":
            answers = []
        if not answers:
            timer = self.timer_s
            self._pending = None if timer is None else _Pending(now + tx_s + timer, m.TIMER_IRQ | m.TX_IRQ)
            return
        if injected == "bcc" and len(answers[0]) >= 8:
            answers = [a[:-8] + [b ^ 1 for b in a[-8:]] for a in answers]
        if injected == "crc" and len(answers[0]) == 24:
            answers = [a[:-1] + [a[-1] ^ 1] for a in answers]
        length = max(map(len, answers))
        received, collision = [], None
        for i in range(length):
            column = {a[i] for a in answers if i < len(a)}
            if len(column) > 1 and collision is None:
                collision = i
            received.append(max(column))
        rx_s = (length + length // 8 + 2) * BIT_S
        self.air_s += FDT_S + rx_s
        error, coll = 0, 0x80
        if collision is not None:
            position = align + collision + 1
            error |= m.COLL_ERR
            coll = m.COLL_POS_NOT_VALID if position > 32 else (position & 0x1F)
        error |= INJECTED_ERRORS.get(injected, 0) if injected is not None else 0
        self._pending = _Pending(now + tx_s + FDT_S + rx_s, m.RX_IRQ | m.TX_IRQ, _pack(received, align),
                                 error, coll, (align + length) % 8)


class EmulatedTransport:
    """The :class:`~drivers.spi.Transport` to an emulated chip: each transfer advances the
    clock by ``bytes * 8 / speed_hz + overhead_s`` (``overhead_s``: the host's per-transfer cost)."""

    def __init__(self, chip: MFRC522Emulator, speed_hz: int = 4_000_000, overhead_s: float = 0.0) -> None:
        self.chip, self.speed_hz, self.overhead_s = chip, speed_hz, overhead_s
        self.transfers = self.bytes = 0
        self.busy_s = 0.0
        self.closed = False

    def transfer(self, data: bytes) -> bytes:
        if self.closed:
            raise ValueError("emulated SPI transport is closed")
        seconds = len(data) * 8 / self.speed_hz + self.overhead_s
        self.transfers += 1
        self.bytes += len(data)
        self.busy_s += seconds
        self.chip.clock.sleep(seconds)
        return self.chip.spi(data)

    def close(self) -> None:
        self.closed = True


def poll_timing(speed_hz: int, timeout_us: int, tags: int, uid_bytes: int = 7, overhead_s: float = 0.0,
                irq_poll_us: int = 100) -> dict[str, float]:
    """One zone poll with *tags* tags on the antenna, measured on the emulator.

    Returns seconds, air seconds, SPI seconds, SPI transfers and bytes, register accesses.
    """
    clock = VirtualClock()
    chip = MFRC522Emulator(clock)
    transport = EmulatedTransport(chip, speed_hz, overhead_s)
    driver = m.MFRC522(transport, timeout_us=timeout_us, irq_poll_us=irq_poll_us, sleep=clock.sleep)
    driver.init()
    for i in range(tags):
        chip.place(bytes((0x04, 0x5A, i * 37 % 256, 0x10 + i, 0x20, 0x30, i)) if uid_bytes == 7
                   else bytes((0x10 + i, 0x5A, i, 0x20)))
    before = (clock(), chip.air_s, transport.busy_s, transport.transfers, transport.bytes,
              driver.counts["reads"] + driver.counts["writes"])
    found = driver.scan(max_tags=tags + 1)
    driver.antenna(False)
    assert len(found.tags) == tags
    after = (clock(), chip.air_s, transport.busy_s, transport.transfers, transport.bytes,
             driver.counts["reads"] + driver.counts["writes"])
    keys = ("seconds", "air_s", "spi_s", "transfers", "spi_bytes", "registers")
    return {k: b - a for k, a, b in zip(keys, before, after)}


if __name__ == "__main__":     # python -m drivers.emulated.mfrc522 [SPI_HZ [TIMEOUT_US [OVERHEAD_US]]]
    import sys

    speed = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000
    timeout = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    overhead = float(sys.argv[3]) * 1e-6 if len(sys.argv) > 3 else 0.0
    print(f"SPI {speed / 1e6:g} MHz, timer {timeout} us, {overhead * 1e6:g} us per transfer")
    print("tags  uid  poll ms  air ms  SPI ms  transfers  bytes  registers")
    for uid_bytes, n in ((7, 0), (4, 1), (7, 1), (7, 2), (7, 3)):
        r = poll_timing(speed, timeout, n, uid_bytes, overhead)
        print(f"{n:4}  {uid_bytes if n else '-':>3}  {r['seconds'] * 1e3:7.2f}  {r['air_s'] * 1e3:6.2f}  "
              f"{r['spi_s'] * 1e3:6.2f}  {r['transfers']:9}  {r['spi_bytes']:5}  {r['registers']:9}")
