"""MFRC522 reader IC driver (NXP MFRC522 data sheet rev. 3.9) over an SPI transport.

Reads ISO/IEC 14443 A tags as the card zones need them: is a tag on the
antenna, and which UID (4, 7 or 10 bytes, cascade levels 1 to 3, checked with
the BCC and the SAK's CRC_A). Several tags on one antenna (two hole cards, a
flop) are read one after the other: anticollision, SELECT, HLTA, REQA again.

The chip's timer ends every wait: TModeReg.TAuto starts it at the end of each
transmission, so an empty antenna costs one timeout (``timeout_us``, 1 ms by
default), and the driver reads ComIrqReg a bounded number of times, sleeping
``irq_poll_us`` between reads (``sleep`` is injected: the emulator's virtual
clock in tests). A chip that never raises an interrupt is a :class:`ChipFault`
("not-answering"), a wrong VersionReg one too ("bad-version"); a garbled frame
(parity, CRC_A, BCC, unresolved collision) is a :class:`ReadError`. Both are
counted in :attr:`MFRC522.counts`.

Why not the ``mfrc522`` package: see ``docs/readers.md``.
"""
from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from drivers.spi import Transport

if TYPE_CHECKING:
    from gpiozero.pins import Factory

__all__ = [
    "MFRC522", "ChipFault", "ReadError", "Rx", "Tag", "Scan", "crc_a", "bcc", "KNOWN_VERSIONS",
]

log = logging.getLogger(__name__)

# -- registers (data sheet §9.2) ---------------------------------------------
COMMAND, COM_IEN, DIV_IEN, COM_IRQ, DIV_IRQ, ERROR = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
STATUS1, STATUS2, FIFO_DATA, FIFO_LEVEL, WATER_LEVEL = 0x07, 0x08, 0x09, 0x0A, 0x0B
CONTROL, BIT_FRAMING, COLL = 0x0C, 0x0D, 0x0E
MODE, TX_MODE, RX_MODE, TX_CONTROL, TX_ASK = 0x11, 0x12, 0x13, 0x14, 0x15
CRC_RESULT_H, CRC_RESULT_L, MOD_WIDTH, RF_CFG = 0x21, 0x22, 0x24, 0x26
T_MODE, T_PRESCALER, T_RELOAD_H, T_RELOAD_L = 0x2A, 0x2B, 0x2C, 0x2D
VERSION = 0x37

# -- commands (§10.3) and register bits ---------------------------------------
CMD_IDLE, CMD_CALC_CRC, CMD_TRANSMIT, CMD_TRANSCEIVE, CMD_SOFT_RESET = 0x00, 0x03, 0x04, 0x0C, 0x0F
POWER_DOWN = 0x10                     # CommandReg
TX_IRQ, RX_IRQ, IDLE_IRQ, ERR_IRQ, TIMER_IRQ = 0x40, 0x20, 0x10, 0x02, 0x01   # ComIrqReg
CRC_IRQ = 0x04                        # DivIrqReg
BUFFER_OVFL, COLL_ERR, CRC_ERR, PARITY_ERR, PROTOCOL_ERR = 0x10, 0x08, 0x04, 0x02, 0x01  # ErrorReg
FLUSH = 0x80                          # FIFOLevelReg
START_SEND = 0x80                     # BitFramingReg
COLL_POS_NOT_VALID = 0x20             # CollReg
T_AUTO = 0x80                         # TModeReg

# -- ISO/IEC 14443-3 type A ----------------------------------------------------
REQA, WUPA, HLTA, CT = 0x26, 0x52, 0x50, 0x88
SEL = (0x93, 0x95, 0x97)              # cascade levels 1, 2, 3
SAK_CASCADE = 0x04

KNOWN_VERSIONS = {0x88: "FM17522", 0x90: "MFRC522 v0.0", 0x91: "MFRC522 v1.0",
                  0x92: "MFRC522 v2.0", 0xB2: "FM17522 (clone)"}
"""VersionReg values of chips that answer like an MFRC522."""

TIMER_PRESCALER = 0xA9                # f_timer = 13.56 MHz / (2*169+1) = 40 kHz: 25 us a tick
TICK_S = (2 * TIMER_PRESCALER + 1) / 13.56e6


class ChipFault(Exception):
    """The chip itself misbehaves: ``fault`` is ``not-answering`` or ``bad-version``."""

    def __init__(self, fault: str, detail: str) -> None:
        self.fault, self.detail = fault, detail
        super().__init__(f"{fault}: {detail}")


class ReadError(Exception):
    """A frame from a tag that cannot be trusted: ``kind`` is ``parity``, ``protocol``,
    ``overflow``, ``crc``, ``bcc``, ``collision``, ``frame`` or ``lost``."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind, self.detail = kind, detail
        super().__init__(f"{kind}: {detail}")


@dataclass(frozen=True)
class Rx:
    """A received frame: ``data``; ``last_bits`` valid in the last byte (0 = all 8);
    ``coll_pos`` the CollReg position of the first collision (1..32), None if none."""

    data: bytes
    last_bits: int = 0
    coll_pos: int | None = None


@dataclass(frozen=True)
class Tag:
    """A selected tag: its full ``uid`` (4, 7 or 10 bytes) and final ``sak``."""

    uid: bytes
    sak: int

    @property
    def uid_hex(self) -> str:
        """The UID as upper-case hex without separators (``"04A1B2C3D4E580"``)."""
        return self.uid.hex().upper()


@dataclass(frozen=True)
class Scan:
    """The tags read in one poll; ``truncated`` if more tags were left unread."""

    tags: tuple[Tag, ...]
    truncated: bool = False


def crc_a(data: bytes) -> bytes:
    """ISO/IEC 14443-3 CRC_A of *data*, low byte first (``crc_a(b"\\x50\\x00") == b"\\x57\\xcd"``)."""
    crc = 0x6363
    for byte in data:
        byte ^= crc & 0xFF
        byte = (byte ^ (byte << 4)) & 0xFF
        crc = (crc >> 8) ^ (byte << 8) ^ (byte << 3) ^ (byte >> 4)
    return bytes((crc & 0xFF, crc >> 8))


def bcc(uid4: bytes | bytearray) -> int:
    """The block check character of 4 UID bytes (their XOR)."""
    return uid4[0] ^ uid4[1] ^ uid4[2] ^ uid4[3]


def read_address(reg: int) -> int:
    """The SPI address byte that reads *reg* (§8.1.2.3)."""
    return 0x80 | ((reg << 1) & 0x7E)


def write_address(reg: int) -> int:
    """The SPI address byte that writes *reg*."""
    return (reg << 1) & 0x7E


class MFRC522:
    """One MFRC522 on *transport*; optional ``reset_pin`` (NRSTPD, a gpiozero pin name).

    Call :meth:`init` before reading. :meth:`close` turns the antenna off and
    releases the transport and the reset pin, nothing else.
    """

    def __init__(self, transport: Transport, *, reset_pin: int | str | None = None,
                 pin_factory: Factory | None = None, timeout_us: int = 1000, irq_poll_us: int = 100,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not 100 <= timeout_us <= 1_600_000:
            raise ValueError(f"timeout_us {timeout_us} out of 100..1600000")
        if irq_poll_us <= 0:
            raise ValueError(f"irq_poll_us must be positive, not {irq_poll_us}")
        self.transport = transport
        self.timeout_us, self.irq_poll_us = timeout_us, irq_poll_us
        self._sleep = sleep
        self.counts: Counter[str] = Counter()
        # The longest frame we send (SELECT, 9 bytes) takes ~0.8 ms on air, then the timer runs.
        self.max_wait_reads = math.ceil(1.5 * (timeout_us + 1000) / irq_poll_us) + 4
        self._reset = None
        if reset_pin is not None:
            from gpiozero import DigitalOutputDevice
            self._reset = DigitalOutputDevice(reset_pin, initial_value=True, pin_factory=pin_factory)
        self._closed = False

    # -- registers -------------------------------------------------------------
    def _transfer(self, data: bytes) -> bytes:
        if self._closed:
            raise ValueError("MFRC522 is closed")
        self.counts["transfers"] += 1
        self.counts["spi_bytes"] += len(data)
        return self.transport.transfer(data)

    def read(self, reg: int) -> int:
        """The value of register *reg*."""
        self.counts["reads"] += 1
        return self._transfer(bytes((read_address(reg), 0)))[1]

    def write(self, reg: int, value: int) -> None:
        """Write *value* to register *reg*."""
        self.counts["writes"] += 1
        self._transfer(bytes((write_address(reg), value & 0xFF)))

    def write_fifo(self, data: bytes) -> None:
        """Write *data* to the FIFO in one SPI transfer (§8.1.2.2: address, then bytes)."""
        self.counts["writes"] += 1
        self._transfer(bytes((write_address(FIFO_DATA),)) + data)

    def read_fifo(self, n: int) -> bytes:
        """Read *n* bytes from the FIFO in one SPI transfer (the address byte repeated)."""
        if n == 0:
            return b""
        self.counts["reads"] += 1
        return self._transfer(bytes((read_address(FIFO_DATA),)) * n + b"\x00")[1:]

    def version(self) -> int:
        """VersionReg (0x91 or 0x92 for a genuine MFRC522; see :data:`KNOWN_VERSIONS`)."""
        return self.read(VERSION)

    # -- set-up ------------------------------------------------------------------
    def init(self) -> int:
        """Reset the chip, check its version, set the timer, turn the antenna on; return the version."""
        if self._reset is not None:
            self._reset.off()
            self._sleep(0.0001)
            self._reset.on()
            self._sleep(0.05)              # oscillator start-up (§8.8.2), generous
        self.write(COMMAND, CMD_SOFT_RESET)
        for _ in range(20):
            self._sleep(0.0001)
            if not self.read(COMMAND) & POWER_DOWN:
                break
        else:
            raise self._fault("not-answering", "still powered down 2 ms after SoftReset")
        version = self.version()
        if version in (0x00, 0xFF):
            raise self._fault("not-answering", f"VersionReg reads 0x{version:02X}: no chip on the bus?")
        if version not in KNOWN_VERSIONS:
            raise self._fault("bad-version", f"VersionReg 0x{version:02X} is no MFRC522")
        reload = max(1, min(0xFFFF, round(self.timeout_us * 1e-6 / TICK_S) - 1))
        for reg, value in ((TX_MODE, 0x00), (RX_MODE, 0x00), (MOD_WIDTH, 0x26),
                           (T_MODE, T_AUTO | (TIMER_PRESCALER >> 8)), (T_PRESCALER, TIMER_PRESCALER & 0xFF),
                           (T_RELOAD_H, reload >> 8), (T_RELOAD_L, reload & 0xFF),
                           (TX_ASK, 0x40), (MODE, 0x3D)):
            self.write(reg, value)
        self.antenna(True)
        return version

    def antenna(self, on: bool) -> None:
        """Switch the RF field on or off (TxControlReg Tx1RFEn, Tx2RFEn). Off resets every tag."""
        value = self.read(TX_CONTROL)
        self.write(TX_CONTROL, (value | 0x03) if on else (value & ~0x03))

    # -- framing -----------------------------------------------------------------
    def _fault(self, fault: str, detail: str) -> ChipFault:
        self.counts[f"fault:{fault}"] += 1
        log.debug("mfrc522 %s: %s", fault, detail)
        return ChipFault(fault, detail)

    def _error(self, kind: str, detail: str) -> ReadError:
        self.counts[f"error:{kind}"] += 1
        log.debug("mfrc522 read error %s: %s", kind, detail)
        return ReadError(kind, detail)

    def _wait_irq(self, done: int) -> int:
        """Read ComIrqReg until a bit of *done* or TimerIRq is set; bounded."""
        for _ in range(self.max_wait_reads):
            irq = self.read(COM_IRQ)
            if irq == 0xFF:
                raise self._fault("not-answering", "ComIrqReg reads 0xFF (MISO stuck high?)")
            if irq & (done | TIMER_IRQ):
                return irq
            self._sleep(self.irq_poll_us * 1e-6)
        raise self._fault("not-answering", f"no interrupt after {self.max_wait_reads} reads of ComIrqReg")

    def _start(self, command: int, data: bytes, framing: int) -> None:
        self.write(COMMAND, CMD_IDLE)
        self.write(COM_IRQ, 0x7F)          # Set1 = 0: clear every interrupt bit
        self.write(FIFO_LEVEL, FLUSH)
        self.write_fifo(data)
        self.write(BIT_FRAMING, framing)   # StartSend clear
        self.write(COMMAND, command)

    def transceive(self, data: bytes, tx_last_bits: int = 0, rx_align: int = 0) -> Rx | None:
        """Send *data*, return the tag's answer, or None when the chip's timer ran out (no tag).

        Collisions are returned (``coll_pos``); other errors raise :class:`ReadError`.
        """
        framing = (rx_align << 4) | tx_last_bits
        self._start(CMD_TRANSCEIVE, data, framing)
        self.write(BIT_FRAMING, START_SEND | framing)
        irq = self._wait_irq(RX_IRQ | IDLE_IRQ)
        if not irq & (RX_IRQ | IDLE_IRQ):
            self.counts["timeouts"] += 1
            return None
        error = self.read(ERROR)
        if error & BUFFER_OVFL:
            raise self._error("overflow", "FIFO overflow")
        if error & PARITY_ERR:
            raise self._error("parity", f"parity error answering {data.hex()}")
        if error & PROTOCOL_ERR:
            raise self._error("protocol", f"protocol error answering {data.hex()}")
        coll_pos = None
        if error & COLL_ERR:
            coll = self.read(COLL)
            if coll & COLL_POS_NOT_VALID:
                raise self._error("collision", "collision outside the CollPos range")
            coll_pos = (coll & 0x1F) or 32
        received = self.read_fifo(self.read(FIFO_LEVEL) & 0x7F)
        return Rx(received, self.read(CONTROL) & 0x07, coll_pos)

    def transmit(self, data: bytes) -> None:
        """Send *data* expecting no answer (HLTA)."""
        self._start(CMD_TRANSMIT, data, 0)
        self._wait_irq(IDLE_IRQ | TX_IRQ)

    def calc_crc(self, data: bytes) -> bytes:
        """CRC_A of *data* computed by the chip's CalcCRC command (low byte first)."""
        self.write(COMMAND, CMD_IDLE)
        self.write(DIV_IRQ, CRC_IRQ)       # Set2 = 0: clear CRCIRq
        self.write(FIFO_LEVEL, FLUSH)
        self.write_fifo(data)
        self.write(COMMAND, CMD_CALC_CRC)
        for _ in range(20):
            if self.read(DIV_IRQ) & CRC_IRQ:
                self.write(COMMAND, CMD_IDLE)
                return bytes((self.read(CRC_RESULT_L), self.read(CRC_RESULT_H)))
            self._sleep(self.irq_poll_us * 1e-6)
        raise self._fault("not-answering", "CalcCRC never finished")

    # -- ISO/IEC 14443-3 ---------------------------------------------------------------
    def request(self, wake: bool = False) -> bytes | None:
        """REQA (or WUPA if *wake*, which also wakes halted tags): the ATQA, or None if no tag answers.

        Tags answer at the same time; differing ATQAs collide, which still means "tags here".
        """
        rx = self.transceive(bytes((WUPA if wake else REQA,)), tx_last_bits=7)
        if rx is None:
            return None
        if len(rx.data) != 2 and rx.coll_pos is None:
            raise self._error("frame", f"ATQA of {len(rx.data)} bytes")
        return rx.data

    def anticollision(self, level: int) -> bytes:
        """The 5 bytes (UID CLn + BCC) of one tag at cascade *level* (1..3).

        On a collision the driver takes the 1 branch (ISO/IEC 14443-3 §6.5.3),
        so with several tags the highest UID prefix wins. BCC is checked.
        """
        sel = SEL[level - 1]
        known, known_bits = bytearray(5), 0
        for _ in range(33):
            full, part = divmod(known_bits, 8)
            nvb = ((2 + full) << 4) | part
            rx = self.transceive(bytes((sel, nvb)) + bytes(known[:full + (1 if part else 0)]),
                                 tx_last_bits=part, rx_align=part)
            if rx is None:
                raise self._error("lost", f"tag left during anticollision CL{level}")
            got = bytearray(known)
            if rx.data:
                low = (1 << part) - 1
                got[full] = (known[full] & low) | (rx.data[0] & ~low & 0xFF)
                for i, byte in enumerate(rx.data[1:5 - full], start=full + 1):
                    got[i] = byte
            if rx.coll_pos is None:
                if len(rx.data) != 5 - full:
                    raise self._error("frame", f"anticollision CL{level}: {len(rx.data)} bytes")
                known = got
                break
            bit = full * 8 + rx.coll_pos - 1           # CollPos counts from bit 0 of the FIFO's first byte
            if not known_bits <= bit < 32:
                raise self._error("collision", f"CollPos {rx.coll_pos} after {known_bits} known bits")
            index, shift = divmod(bit, 8)
            got[index] = (got[index] & ((1 << shift) - 1)) | (1 << shift)
            got[index + 1:] = bytes(4 - index)
            known, known_bits = got, bit + 1
        else:
            raise self._error("collision", f"anticollision CL{level} did not converge")
        if bcc(known[:4]) != known[4]:
            raise self._error("bcc", f"CL{level} {bytes(known[:4]).hex()} BCC {known[4]:02X} "
                                     f"!= {bcc(known[:4]):02X}")
        return bytes(known)

    def select(self, level: int, uid_cln: bytes) -> int:
        """SELECT the tag with *uid_cln* (4 bytes + BCC) at cascade *level*; return its SAK."""
        frame = bytes((SEL[level - 1], 0x70)) + uid_cln
        rx = self.transceive(frame + crc_a(frame))
        if rx is None:
            raise self._error("lost", f"no SAK at CL{level}")
        if rx.coll_pos is not None or len(rx.data) != 3:
            raise self._error("frame", f"SAK frame {rx.data.hex()} at CL{level}")
        if crc_a(rx.data[:1]) != rx.data[1:]:
            raise self._error("crc", f"SAK {rx.data.hex()} fails CRC_A")
        return rx.data[0]

    def select_tag(self) -> Tag:
        """Anticollision and SELECT through the cascade levels: the full UID of one READY tag."""
        uid = b""
        for level in (1, 2, 3):
            uid_cln = self.anticollision(level)
            sak = self.select(level, uid_cln)
            if not sak & SAK_CASCADE:
                return Tag(uid + uid_cln[:4], sak)
            if uid_cln[0] != CT:
                raise self._error("frame", f"SAK asks for CL{level + 1} but CL{level} has no CT")
            uid += uid_cln[1:4]
        raise self._error("frame", "cascade beyond level 3")

    def halt(self) -> None:
        """HLTA: the selected tag goes to HALT and answers only WUPA from now on."""
        frame = bytes((HLTA, 0x00))
        self.transmit(frame + crc_a(frame))

    def scan(self, max_tags: int = 4) -> Scan:
        """Every tag in IDLE on the antenna: REQA, select, HLTA, until no answer (or *max_tags*).

        Tags read are left halted: switch the field off and on (:meth:`antenna`)
        before the next scan so that they answer REQA again.
        """
        tags: list[Tag] = []
        while len(tags) < max_tags:
            if self.request() is None:
                return Scan(tuple(tags))
            tags.append(self.select_tag())
            self.halt()
        return Scan(tuple(tags), truncated=self.request() is not None)

    # -- life cycle --------------------------------------------------------------------
    def close(self) -> None:
        """Antenna off (if the chip answers), then release the transport and the reset pin only."""
        if self._closed:
            return
        try:
            self.antenna(False)
        except Exception as exc:  # closing must not fail on a dead chip
            log.debug("mfrc522: antenna off on close failed: %s", exc)
        self._closed = True
        try:
            self.transport.close()
        finally:
            if self._reset is not None:
                self._reset.close()
                self._reset = None

    def __enter__(self) -> MFRC522:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
