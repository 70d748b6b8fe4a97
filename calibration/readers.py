"""Reader mapping: which MFRC522 (SPI bus, chip-select, reset pin) reads which card zone.

Read from the ``[readers]`` table of a table profile (``hardware/tables/*.toml``);
other top-level tables belong to other devices and are left alone. Every key
is checked at start-up; an error names the file, the key and the reason::

    [readers]
    spi_hz = 4_000_000      # SPI clock of every reader (MFRC522: at most 10 MHz)
    timeout_us = 1000       # the chip's timer: how long to wait for a tag's answer
    enter_polls = 2         # N: seen in N consecutive polls -> CardEntered
    leave_polls = 3         # M: missed in M consecutive polls -> CardLeft

    [[readers.reader]]
    id = "r01"              # unique
    zone = "seat:1"         # seat:N, board:flop|turn|river, muck, burn; once each
    bus = 0                 # /dev/spidev<bus>.<cs>; (bus, cs) once each
    cs = 0
    cs_gpio = 8             # optional: the BCM pin driving its chip select (a cs-gpios overlay); once each
    reset_pin = "GPIO25"    # optional, gpiozero pin name or BCM number; once each
    max_tags = 2            # optional (default 4): tags read per poll at most
"""
from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from firmware_host.configfile import Section, read_toml
from firmware_host.observations import ObservationError, check_zone

__all__ = ["ReaderConfig", "ReaderTable", "load_readers", "parse_readers"]

MAX_SEAT = 10


@dataclass(frozen=True)
class ReaderConfig:
    """One reader: its ``id``, the ``zone`` under its antenna and where it is wired."""

    id: str
    zone: str
    bus: int
    cs: int
    reset_pin: int | str | None = None
    max_tags: int = 4
    cs_gpio: int | None = None


@dataclass(frozen=True)
class ReaderTable:
    """Every zone reader of a table, in polling order, with the shared settings."""

    name: str
    spi_hz: int
    timeout_us: int
    enter_polls: int
    leave_polls: int
    readers: tuple[ReaderConfig, ...]

    def reader(self, reader_id: str) -> ReaderConfig:
        """The reader called *reader_id* (KeyError if none)."""
        for reader in self.readers:
            if reader.id == reader_id:
                return reader
        raise KeyError(reader_id)

    @property
    def zones(self) -> dict[str, str]:
        """Reader id -> zone."""
        return {r.id: r.zone for r in self.readers}


def load_readers(path: str | PathLike[str]) -> ReaderTable:
    """Read the ``[readers]`` of the table profile at *path*; raise :class:`ConfigError`."""
    return parse_readers(read_toml(path), Path(path).name, default_name=Path(path).stem)


def parse_readers(data: dict[str, Any], file: str = "<table>", default_name: str = "") -> ReaderTable:
    """The :class:`ReaderTable` of a parsed table profile *data* (errors name *file*).

    Other top-level tables belong to other devices' loaders and are left alone.
    """
    top = Section(data, file)
    name = top.get_str("name", default_name)
    section = top.section("readers")
    spi_hz = section.get_int("spi_hz", 4_000_000, minval=10_000, maxval=10_000_000)
    timeout_us = section.get_int("timeout_us", 1000, minval=200, maxval=100_000)
    enter = section.get_int("enter_polls", minval=1, maxval=20)
    leave = section.get_int("leave_polls", minval=1, maxval=50)
    entries = section.sections("reader")
    if not entries:
        raise section.error("reader", "no reader: add [[readers.reader]] tables")
    readers = [_reader(entry) for entry in entries]
    section.finish()
    _check_unique(section, readers)
    return ReaderTable(name, spi_hz, timeout_us, enter, leave, tuple(readers))


def _reader(entry: Section) -> ReaderConfig:
    zone = entry.get_str("zone")
    try:
        check_zone(zone, ("seat", "board", "muck", "burn"))
    except ObservationError as e:
        raise entry.error("zone", str(e)) from None
    if zone.startswith("seat:") and not 1 <= int(zone[5:]) <= MAX_SEAT:
        raise entry.error("zone", f"seat must be 1..{MAX_SEAT} in {zone!r}")
    pin = entry.get("reset_pin", None)
    if pin is not None and (isinstance(pin, bool) or not isinstance(pin, (int, str))):
        raise entry.error("reset_pin", f"expected a pin name or number, not {pin!r}")
    return ReaderConfig(entry.get_str("id", nonempty=True), zone, entry.get_int("bus", minval=0, maxval=6),
                        entry.get_int("cs", minval=0, maxval=15), pin,
                        entry.get_int("max_tags", 4, minval=1, maxval=32),
                        entry.get_int("cs_gpio", None, minval=2, maxval=27))


def _check_unique(section: Section, readers: list[ReaderConfig]) -> None:
    """Ids, zones, (bus, cs) pairs, chip-select GPIOs and reset pins: once each."""
    seen: dict[tuple[str, object], int] = {}
    for i, r in enumerate(readers):
        for what, value in (("id", r.id), ("zone", r.zone), ("cs", (r.bus, r.cs)), ("cs_gpio", r.cs_gpio),
                            ("reset_pin", r.reset_pin)):
            if value is None:
                continue
            if (what, value) in seen:
                shown = f"bus {r.bus} cs {r.cs}" if what == "cs" else repr(value)
                raise section.error(f"reader[{i}].{what}",
                                    f"{shown} already used by readers.reader[{seen[what, value]}]")
            seen[what, value] = i


