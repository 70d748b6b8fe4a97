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
    reset_pin = "GPIO25"    # optional, gpiozero pin name or BCM number; once each
    max_tags = 2            # optional (default 4): tags read per poll at most
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from firmware_host.observations import ObservationError, check_zone

__all__ = ["ReaderConfig", "ReaderTable", "ReaderConfigError", "load_readers", "parse_readers"]

MAX_SEAT = 10


class ReaderConfigError(ValueError):
    """A reader mapping that cannot be used: names the *file*, the *key* and the *reason*."""

    def __init__(self, file: str, key: str, reason: str) -> None:
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


@dataclass(frozen=True)
class ReaderConfig:
    """One reader: its ``id``, the ``zone`` under its antenna and where it is wired."""

    id: str
    zone: str
    bus: int
    cs: int
    reset_pin: int | str | None = None
    max_tags: int = 4


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


# key: (type, low, high, default); default ... means required
_TABLE = {
    "spi_hz": (int, 10_000, 10_000_000, 4_000_000),
    "timeout_us": (int, 200, 100_000, 1000),
    "enter_polls": (int, 1, 20, ...),
    "leave_polls": (int, 1, 50, ...),
    "reader": (list, None, None, ...),
}
_READER = {
    "id": (str, None, None, ...),
    "zone": (str, None, None, ...),
    "bus": (int, 0, 6, ...),
    "cs": (int, 0, 15, ...),
    "reset_pin": ((int, str), None, None, None),
    "max_tags": (int, 1, 32, 4),
}


def load_readers(path: str | PathLike[str]) -> ReaderTable:
    """Read the ``[readers]`` of the table profile at *path*; raise :class:`ReaderConfigError`."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ReaderConfigError(path.name, "", f"cannot read: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ReaderConfigError(path.name, "", f"not valid TOML: {e}") from None
    return parse_readers(data, path.name, default_name=path.stem)


def parse_readers(data: dict[str, Any], file: str = "<table>", default_name: str = "") -> ReaderTable:
    """The :class:`ReaderTable` of a parsed table profile *data* (errors name *file*)."""
    def error(key: str, reason: str) -> ReaderConfigError:
        return ReaderConfigError(file, key, reason)

    name = data.get("name", default_name)
    if not isinstance(name, str):
        raise error("name", f"must be a string, not {type(name).__name__}")
    section = data.get("readers")
    if not isinstance(section, dict):
        raise error("readers", "missing [readers] table" if section is None else "must be a table")
    table = _fields(section, _TABLE, "readers", error)
    if not table["reader"]:
        raise error("readers.reader", "no reader: add [[readers.reader]] tables")
    readers, seen = [], {}
    for i, entry in enumerate(table["reader"]):
        key = f"readers.reader[{i}]"
        if not isinstance(entry, dict):
            raise error(key, "must be a table ([[readers.reader]])")
        fields = _fields(entry, _READER, key, error)
        zone = fields["zone"]
        try:
            check_zone(zone, ("seat", "board", "muck", "burn"))
        except ObservationError as e:
            raise error(f"{key}.zone", str(e)) from None
        if zone.startswith("seat:") and not 1 <= int(zone[5:]) <= MAX_SEAT:
            raise error(f"{key}.zone", f"seat must be 1..{MAX_SEAT} in {zone!r}")
        if not fields["id"]:
            raise error(f"{key}.id", "must not be empty")
        for what, value in (("id", fields["id"]), ("zone", zone), ("cs", (fields["bus"], fields["cs"])),
                            ("reset_pin", fields["reset_pin"])):
            if value is None:
                continue
            if (what, value) in seen:
                shown = f"bus {value[0]} cs {value[1]}" if what == "cs" else repr(value)
                raise error(f"{key}.{what}", f"{shown} already used by readers.reader[{seen[what, value]}]")
            seen[what, value] = i
        readers.append(ReaderConfig(**fields))
    return ReaderTable(name, table["spi_hz"], table["timeout_us"], table["enter_polls"],
                       table["leave_polls"], tuple(readers))


def _fields(data: dict[str, Any], spec: dict, where: str, error) -> dict[str, Any]:
    unknown = sorted(set(data) - set(spec))
    if unknown:
        raise error(f"{where}.{unknown[0]}", f"unknown key; expected one of {', '.join(spec)}")
    out = {}
    for key, (kind, low, high, default) in spec.items():
        if key not in data:
            if default is ...:
                raise error(f"{where}.{key}", "missing")
            out[key] = default
            continue
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise error(f"{where}.{key}", f"must be {names}, not {type(value).__name__} {value!r}")
        if low is not None and not low <= value <= high:
            raise error(f"{where}.{key}", f"{value} out of range {low}..{high}")
        out[key] = value
    return out
