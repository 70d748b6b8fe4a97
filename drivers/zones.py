"""Zone readers: the MFRC522s under the felt, polled round-robin, as card observations.

One poll of a reader reads every tag on its antenna (:meth:`MFRC522.scan
<drivers.mfrc522.MFRC522.scan>`) and becomes a :class:`PollRecord` (time,
reader id, UIDs, or the error). :class:`ZoneTracker`, the functional core,
turns the stream of records into observations: a UID seen in N consecutive
polls enters (``CardEntered``, or ``ForeignCard`` if the deck lookup does not
know it), a UID that entered and is missed in M consecutive polls leaves
(``CardLeft``); a card of the table's other deck is a ``WrongBackCard``; a reader
that stops answering is a ``DeviceFault``
(``reader:<zone>``) until a poll works again (``DeviceRecovered``).

Backends give the records: real chips (:func:`open_real`, spidev + gpiozero),
emulated chips (:func:`open_emulated`, :mod:`drivers.emulated.mfrc522`), both
polled by :class:`ZoneReaders`; or recorded records (:func:`replay`,
:func:`load_records`), which give the same observations as the live run.
"""
from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any, Protocol

from calibration.readers import ReaderTable
from drivers.mfrc522 import MFRC522, ChipFault, ReadError, Scan
from firmware_host.observations import (
    DECK,
    CardEntered,
    CardLeft,
    DeviceFault,
    DeviceRecovered,
    ForeignCard,
    Observation,
    WrongBackCard,
)

if TYPE_CHECKING:
    from gpiozero.pins import Factory

    from drivers.emulated.mfrc522 import MFRC522Emulator, VirtualClock

__all__ = [
    "PollRecord", "ZoneTracker", "ZoneReaders", "Chip", "Lookup",
    "open_real", "open_emulated", "replay", "load_records", "save_records",
]

log = logging.getLogger(__name__)

Lookup = Callable[[str], object]
"""UID (upper-case hex) -> card code (``"As"``), or None for a UID of no registered deck.
Also taken: a tuple ``(card, ...)``, and :class:`calibration.deck.Lookup` (``kind`` card,
wrong-back or foreign), so ``Registry.lookup`` can be passed as is."""

CHIP_FAULTS = ("not-answering", "bad-version")
READ_ERROR = "read-error"


@dataclass(frozen=True)
class PollRecord:
    """One poll of one reader: ``t`` when it ended, ``uids`` read (sorted upper-case hex),
    or ``error`` (``not-answering``, ``bad-version``, ``read-error``) with ``detail``;
    ``truncated`` when more tags were on the antenna than ``max_tags``; ``duration`` of the poll."""

    t: float
    reader: str
    uids: tuple[str, ...] = ()
    error: str | None = None
    detail: str = ""
    truncated: bool = False
    duration: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["uids"] = list(self.uids)
        return data

    @classmethod
    def from_dict(cls, data: object) -> PollRecord:
        """The record written by :meth:`to_dict`; ValueError naming the problem otherwise."""
        if not isinstance(data, dict):
            raise ValueError(f"a poll record is an object, not {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown key {sorted(unknown)[0]!r} in poll record")
        try:
            t, reader = float(data["t"]), data["reader"]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"poll record needs a numeric 't' and a 'reader': {exc}") from None
        uids = data.get("uids") or ()
        if isinstance(uids, str):
            uids = (uids,)
        if not isinstance(reader, str) or not all(isinstance(u, str) for u in uids):
            raise ValueError("'reader' and 'uids' must be strings")
        error = data.get("error")
        if error is not None and error not in CHIP_FAULTS + (READ_ERROR,):
            raise ValueError(f"unknown error {error!r} in poll record")
        return cls(t, reader, tuple(sorted({u.upper() for u in uids})), error, str(data.get("detail", "")),
                   bool(data.get("truncated", False)), float(data.get("duration", 0.0)))


@dataclass
class _Zone:
    zone: str
    seen: dict[str, int] = field(default_factory=dict)        # not yet entered: consecutive polls seen
    entered: dict[str, str | None] = field(default_factory=dict)   # uid -> card (None: foreign)
    missed: dict[str, int] = field(default_factory=dict)      # entered: consecutive polls missed
    fault: str | None = None
    errors: int = 0


class ZoneTracker:
    """The debounce: poll records in, observations out (no clock, no I/O).

    ``readers`` maps reader id to zone; ``enter_polls`` is N, ``leave_polls`` M.
    ``errors_for_fault`` consecutive read errors on a reader make a ``read-errors`` fault.
    """

    def __init__(self, readers: Mapping[str, str], enter_polls: int, leave_polls: int,
                 lookup: Lookup, errors_for_fault: int = 5) -> None:
        if enter_polls < 1 or leave_polls < 1:
            raise ValueError("enter_polls and leave_polls must be at least 1")
        self.enter_polls, self.leave_polls, self.lookup = enter_polls, leave_polls, lookup
        self.errors_for_fault = errors_for_fault
        self._zones = {reader: _Zone(zone) for reader, zone in readers.items()}
        self.counts: Counter[str] = Counter()

    @classmethod
    def for_table(cls, table: ReaderTable, lookup: Lookup, errors_for_fault: int = 5) -> ZoneTracker:
        return cls(table.zones, table.enter_polls, table.leave_polls, lookup, errors_for_fault)

    def present(self, reader: str) -> dict[str, str | None]:
        """UID -> card of the tags that have entered on *reader* and not left."""
        return dict(self._zones[reader].entered)

    def feed(self, rec: PollRecord) -> list[Observation]:
        """The observations that poll record *rec* makes."""
        state = self._zones.get(rec.reader)
        if state is None:
            self.counts["unknown-reader"] += 1
            log.warning("poll record of unknown reader %r ignored", rec.reader)
            return []
        self.counts["polls"] += 1
        device = f"reader:{state.zone}"
        if rec.error in CHIP_FAULTS:
            self.counts[rec.error] += 1
            if state.fault == rec.error:
                return []
            state.fault = rec.error
            log.warning("%s %s: %s", device, rec.error, rec.detail)
            return [DeviceFault(rec.t, device, rec.error, rec.detail)]
        if rec.error is not None:
            self.counts["read-errors"] += 1
            state.errors += 1
            if state.errors == self.errors_for_fault and state.fault is None:
                state.fault = "read-errors"
                log.warning("%s: %d read errors in a row, last %s", device, state.errors, rec.detail)
                return [DeviceFault(rec.t, device, "read-errors",
                                    f"{state.errors} polls in a row failed, last: {rec.detail}")]
            return []
        out: list[Observation] = []
        if state.fault is not None:
            out.append(DeviceRecovered(rec.t, device, f"after {state.fault}"))
            state.fault = None
        state.errors = 0
        present = set(rec.uids)
        for uid in sorted(present):
            if uid in state.entered:
                state.missed.pop(uid, None)
                continue
            state.seen[uid] = state.seen.get(uid, 0) + 1
            if state.seen[uid] >= self.enter_polls:
                del state.seen[uid]
                out.append(self._enter(rec.t, state, uid))
        for uid in [u for u in state.seen if u not in present]:
            del state.seen[uid]
        if rec.truncated:
            self.counts["truncated"] += 1     # unseen tags may still be there: count no misses
            return out
        for uid in sorted(u for u in state.entered if u not in present):
            state.missed[uid] = state.missed.get(uid, 0) + 1
            if state.missed[uid] >= self.leave_polls:
                del state.missed[uid]
                card = state.entered.pop(uid)
                if card is not None:
                    out.append(CardLeft(rec.t, state.zone, card))
        return out

    def _enter(self, t: float, state: _Zone, uid: str) -> Observation:
        try:
            kind, obs = self._identify(t, state.zone, uid)
        except Exception as exc:  # the registry is another module: its bug must not stop the table
            self.counts["bad-lookup"] += 1
            log.error("deck lookup of %s failed: %s", uid, exc)
            state.entered[uid] = None
            return DeviceFault(t, f"reader:{state.zone}", "bad-lookup", f"{uid}: {exc}")
        self.counts[kind] += 1
        state.entered[uid] = obs.card if isinstance(obs, CardEntered) else None     # only our deck's cards leave
        return obs

    def _identify(self, t: float, zone: str, uid: str) -> tuple[str, Observation]:
        """The kind of tag *uid* is and the observation it makes; ValueError for a lookup's answer that is none."""
        found = self.lookup(uid)
        kind, card, deck = _classify(found)
        if kind == "foreign":
            return kind, ForeignCard(t, zone, uid)
        if card is None or card not in DECK:
            raise ValueError(f"lookup gave {found!r}, not a card")
        if kind == "card":
            return kind, CardEntered(t, zone, card)
        if deck is None:
            raise ValueError(f"lookup gave {found!r}: a wrong-back card without its deck")
        return kind, WrongBackCard(t, zone, card, deck)


def _classify(found: object) -> tuple[str, str | None, str | None]:
    """(kind, card, deck) of a lookup's answer: a card code, None, ``(card, ...)``, or an
    object with ``kind``/``card``/``deck`` (:class:`calibration.deck.Lookup`)."""
    if found is None:
        return "foreign", None, None
    if isinstance(found, str):
        return "card", found, None
    if isinstance(found, tuple) and found:
        return "card", found[0], None
    kind = getattr(found, "kind", None)
    if kind == "foreign":
        return "foreign", None, None
    if kind in ("card", "wrong-back"):
        return kind, getattr(found, "card", None), getattr(found, "deck", None)
    raise ValueError(f"lookup gave {found!r}: expected a card, None or a deck Lookup")


class Chip(Protocol):
    """What :class:`ZoneReaders` needs of a reader chip (an :class:`~drivers.mfrc522.MFRC522`)."""

    def init(self) -> int: ...
    def scan(self, max_tags: int) -> Scan: ...
    def antenna(self, on: bool) -> None: ...
    def close(self) -> None: ...


class ZoneReaders:
    """Polls *chips* (reader id -> chip) round-robin in the table's order.

    ``clock`` stamps every poll (seconds, the table's clock). ``record`` gets
    every :class:`PollRecord` (to save a replay). With ``field_cycle`` each
    reader's RF field is switched off after its poll and back on half a round
    later, so the tags it halted are reset and answer REQA in its next poll.
    A reader in fault is re-initialised at most every ``retry_s`` seconds.
    """

    def __init__(self, table: ReaderTable, chips: Mapping[str, Chip], lookup: Lookup,
                 clock: Callable[[], float], *, record: Callable[[PollRecord], None] | None = None,
                 field_cycle: bool = True, retry_s: float = 1.0) -> None:
        missing = [r.id for r in table.readers if r.id not in chips]
        if missing:
            raise ValueError(f"no chip for reader(s) {', '.join(missing)}")
        self.table, self.chips, self.clock = table, dict(chips), clock
        self.tracker = ZoneTracker.for_table(table, lookup)
        self._record, self.field_cycle, self.retry_s = record, field_cycle, retry_s
        self._down: dict[str, float] = {}          # reader id -> next retry time
        self._next = 0
        self._started = False

    def start(self) -> list[Observation]:
        """Initialise every chip; a chip that fails is a fault, retried later."""
        out: list[Observation] = []
        for reader in self.table.readers:
            start = self.clock()
            try:
                self.chips[reader.id].init()
            except Exception as exc:
                out += self._emit(self._failure(reader.id, start, exc))
        self._started = True
        return out

    def poll_next(self) -> list[Observation]:
        """Poll the next reader once; its observations."""
        if not self._started:
            return self.start() + self.poll_next()
        n = len(self.table.readers)
        index, self._next = self._next, (self._next + 1) % n
        reader = self.table.readers[index]
        rec = self._poll(reader.id, reader.max_tags)
        if self.field_cycle and reader.id not in self._down:
            self._antenna(reader.id, False)
            other = self.table.readers[(index + n // 2) % n].id
            if other not in self._down:
                self._antenna(other, True)
        return self._emit(rec) if rec is not None else []

    def poll_round(self) -> list[Observation]:
        """Poll every reader once, from the next one on."""
        out: list[Observation] = []
        for _ in self.table.readers:
            out += self.poll_next()
        return out

    def run(self, emit: Callable[[Observation], None], stop: Callable[[], bool]) -> None:
        """Poll until ``stop()`` is true, passing every observation to *emit*."""
        while not stop():
            for obs in self.poll_next():
                emit(obs)

    def close(self) -> None:
        """Close every chip (each releases only its own bus device and pin)."""
        for reader_id, chip in self.chips.items():
            try:
                chip.close()
            except Exception as exc:
                log.warning("closing reader %s: %s", reader_id, exc)

    def __enter__(self) -> ZoneReaders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inside ---------------------------------------------------------------------------
    def _emit(self, rec: PollRecord) -> list[Observation]:
        if self._record is not None:
            self._record(rec)
        return self.tracker.feed(rec)

    def _antenna(self, reader_id: str, on: bool) -> None:
        try:
            self.chips[reader_id].antenna(on)
        except Exception as exc:
            log.debug("antenna %s of %s: %s", "on" if on else "off", reader_id, exc)

    def _failure(self, reader_id: str, start: float, exc: Exception) -> PollRecord:
        now = self.clock()
        self._down[reader_id] = now + self.retry_s
        if isinstance(exc, ChipFault):
            return PollRecord(now, reader_id, error=exc.fault, detail=exc.detail, duration=now - start)
        log.exception("reader %s failed", reader_id)
        return PollRecord(now, reader_id, error="not-answering", detail=f"{type(exc).__name__}: {exc}",
                          duration=now - start)

    def _poll(self, reader_id: str, max_tags: int) -> PollRecord | None:
        chip, start = self.chips[reader_id], self.clock()
        if reader_id in self._down:
            if start < self._down[reader_id]:
                return None
            try:
                chip.init()
            except Exception as exc:
                return self._failure(reader_id, start, exc)
            del self._down[reader_id]
        try:
            scan = chip.scan(max_tags)
        except ReadError as exc:
            now = self.clock()
            return PollRecord(now, reader_id, error=READ_ERROR, detail=f"{exc.kind}: {exc.detail}",
                              duration=now - start)
        except Exception as exc:
            return self._failure(reader_id, start, exc)
        now = self.clock()
        uids = tuple(sorted({tag.uid_hex for tag in scan.tags}))
        log.debug("reader %s: %s in %.1f ms", reader_id, uids, (now - start) * 1e3)
        return PollRecord(now, reader_id, uids, truncated=scan.truncated, duration=now - start)


# -- backends ----------------------------------------------------------------------------

def open_real(table: ReaderTable, *, pin_factory: Factory | None = None,
              sleep: Callable[[float], None] = time.sleep, irq_poll_us: int = 100) -> dict[str, MFRC522]:
    """The table's MFRC522s on spidev (imported here) with gpiozero reset pins; closed again on error."""
    from drivers.spi import SpidevTransport

    chips: dict[str, MFRC522] = {}
    try:
        for r in table.readers:
            transport = SpidevTransport(r.bus, r.cs, table.spi_hz)
            try:
                chips[r.id] = MFRC522(transport, reset_pin=r.reset_pin, pin_factory=pin_factory,
                                      timeout_us=table.timeout_us, irq_poll_us=irq_poll_us, sleep=sleep)
            except Exception:
                transport.close()
                raise
    except Exception:
        for chip in chips.values():
            chip.close()
        raise
    return chips


def open_emulated(table: ReaderTable, clock: VirtualClock, *, overhead_s: float = 0.0,
                  pin_factory: Factory | None = None,
                  irq_poll_us: int = 100) -> tuple[dict[str, MFRC522], dict[str, MFRC522Emulator]]:
    """The table's readers as the real driver over emulated chips sharing the virtual *clock*.

    Returns ``(chips, emulators)``: reader id -> :class:`MFRC522`, zone -> emulator
    (place and remove tags there).
    """
    from drivers.emulated.mfrc522 import EmulatedTransport, MFRC522Emulator

    chips: dict[str, MFRC522] = {}
    emulators: dict[str, MFRC522Emulator] = {}
    for r in table.readers:
        emu = MFRC522Emulator(clock)
        emulators[r.zone] = emu
        chips[r.id] = MFRC522(EmulatedTransport(emu, table.spi_hz, overhead_s), reset_pin=r.reset_pin,
                              pin_factory=pin_factory, timeout_us=table.timeout_us,
                              irq_poll_us=irq_poll_us, sleep=clock.sleep)
    return chips, emulators


def replay(records: Iterable[PollRecord], table: ReaderTable, lookup: Lookup) -> list[Observation]:
    """The observations a live run made from these poll *records*."""
    tracker = ZoneTracker.for_table(table, lookup)
    return [obs for rec in records for obs in tracker.feed(rec)]


def save_records(path: str | PathLike[str], records: Iterable[PollRecord]) -> None:
    """Write *records* as JSON lines."""
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec.to_dict()) + "\n")


def load_records(path: str | PathLike[str], counts: Counter[str] | None = None) -> list[PollRecord]:
    """Read JSON-lines poll records; a bad line is logged, counted (``bad-record``) and skipped."""
    records = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                records.append(PollRecord.from_dict(json.loads(line)))
            except ValueError as exc:     # json.JSONDecodeError is a ValueError
                log.warning("%s:%d: bad poll record skipped: %s", path, number, exc)
                if counts is not None:
                    counts["bad-record"] += 1
    return records
