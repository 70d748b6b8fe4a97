"""One loader for every configuration file: TOML in, typed values out, one error naming file, key and reason.

In the manner of Klipper's config: a value is read where it is used, with its bounds in the call;
a section remembers every key asked for, so that :meth:`Section.finish` rejects the keys nobody
asked for and lists the known ones. House-rules profiles, table profiles (reader map, console
pins), camera layouts and the controller's config are all read through it.

>>> s = Section({"spi_hz": 4_000_000, "name": "t1", "polls": 0}, "table.toml", "readers")
>>> s.get_int("spi_hz", minval=10_000, maxval=10_000_000)
4000000
>>> s.get_int("enter_polls", 2)
2
>>> s.get_int("polls", minval=1)
Traceback (most recent call last):
...
firmware_host.configfile.ConfigError: table.toml: readers.polls: 0 is under the minimum 1
>>> s.finish()
Traceback (most recent call last):
...
firmware_host.configfile.ConfigError: table.toml: readers.name: unknown key (known: spi_hz, enter_polls, polls)

This module imports nothing from the rest of the product: drivers and calibration use it too.
"""
from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any, Final, TypeVar

__all__ = ["MISSING", "ConfigError", "Section", "describe", "read_toml"]

T = TypeVar("T")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""The default of a getter whose key is required."""


class ConfigError(ValueError):
    """A configuration file that cannot be used: names the *file*, the *key* path and the *reason*."""

    def __init__(self, file: str, key: str, reason: str) -> None:
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


def read_toml(path: str | PathLike[str], file: str | None = None) -> dict[str, Any]:
    """The parsed TOML file at *path*; :class:`ConfigError` naming it as *file* (default: its name)."""
    path = Path(path)
    file = file or path.name
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise ConfigError(file, "", f"cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, "", f"not valid TOML: {exc}") from None


def describe(value: object) -> str:
    """What a TOML value is, for an error: ``an integer (3)``, ``a table``."""
    kind = _KINDS.get(type(value), type(value).__name__)
    return kind if isinstance(value, (list, dict)) else f"{kind} ({value!r})"


_KINDS: dict[type, str] = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
                           list: "an array", dict: "a table"}


class Section:
    """One TOML table of a file: typed getters with bounds; every key asked for is known.

    *file* names the file in errors, *key* is this table's path in it (``readers.reader[1]``).
    Sub-tables read through :meth:`section` and :meth:`sections` are finished with this one.
    """

    def __init__(self, data: Mapping[str, Any], file: str, key: str = "") -> None:
        self.data, self.file, self.key = data, file, key
        self._known: dict[str, None] = {}
        self._children: list[Section] = []

    @classmethod
    def load(cls, path: str | PathLike[str]) -> Section:
        """The whole file at *path* as a section (errors name the file by its name)."""
        return cls(read_toml(path), Path(path).name)

    # -- errors and keys ------------------------------------------------------------------
    def path(self, name: str) -> str:
        """The full key path of *name* in this section."""
        return f"{self.key}.{name}" if self.key else name

    def error(self, name: str, reason: str) -> ConfigError:
        """An error about key *name* of this section (``""``: the section itself)."""
        return ConfigError(self.file, self.path(name) if name else self.key, reason)

    def has(self, name: str) -> bool:
        """Whether *name* is given (it becomes a known key)."""
        self._known.setdefault(name)
        return name in self.data

    def finish(self) -> None:
        """Reject a key nobody asked for, naming the known ones; then the same for every sub-table."""
        for name in self.data:
            if name not in self._known:
                raise self.error(name, f"unknown key (known: {', '.join(self._known) or 'none'})")
        for child in self._children:
            child.finish()

    # -- typed getters ----------------------------------------------------------------------
    def get(self, name: str, default: Any = MISSING) -> Any:
        """The raw value of *name*, or *default*; missing and required: an error."""
        if not self.has(name):
            if default is MISSING:
                raise self.error(name, "missing required key")
            return default
        return self.data[name]

    def _typed(self, name: str, default: Any, check: Callable[[Any], bool], what: str) -> Any:
        value = self.get(name, default)
        if value is default and name not in self.data:
            return value
        if not check(value):
            raise self.error(name, f"expected {what}, not {describe(value)}")
        return value

    def get_str(self, name: str, default: Any = MISSING, *, nonempty: bool = False,
                choices: Iterable[str] | None = None) -> Any:
        """A string; *nonempty* refuses blanks; *choices* lists the allowed values."""
        value = self._typed(name, default, lambda v: isinstance(v, str), "a string")
        if name in self.data:
            if nonempty and not value.strip():
                raise self.error(name, "is empty")
            if choices is not None and value not in (allowed := tuple(choices)):
                raise self.error(name, f"{value!r} is not one of {', '.join(map(repr, allowed))}")
        return value

    def get_bool(self, name: str, default: Any = MISSING) -> Any:
        """A boolean (``true``/``false``, never 0 or 1)."""
        return self._typed(name, default, lambda v: isinstance(v, bool), "a boolean")

    def get_int(self, name: str, default: Any = MISSING, *, minval: int | None = None,
                maxval: int | None = None) -> Any:
        """An integer (a boolean is none) within [*minval*, *maxval*]."""
        value = self._typed(name, default, lambda v: type(v) is int, "an integer")
        if name in self.data:
            self._bounds(name, value, minval, maxval, None, None)
        return value

    def get_float(self, name: str, default: Any = MISSING, *, minval: float | None = None,
                  maxval: float | None = None, above: float | None = None, below: float | None = None) -> Any:
        """A number (integers accepted) within [*minval*, *maxval*] and (*above*, *below*)."""
        value = self._typed(name, default, lambda v: type(v) in (int, float), "a number")
        if name in self.data:
            self._bounds(name, value, minval, maxval, above, below)
            return float(value)
        return value

    def get_choice(self, name: str, choices: Iterable[T], default: Any = MISSING) -> Any:
        """One of *choices*, compared by value and type."""
        allowed = tuple(choices)
        value = self.get(name, default)
        if name in self.data and not any(value == c and type(value) is type(c) for c in allowed):
            raise self.error(name, f"{value!r} is not one of {', '.join(map(repr, allowed))}")
        return value

    def get_list(self, name: str, default: Any = MISSING, *, item: Callable[[Any], bool] | None = None,
                 what: str = "an array", length: int | None = None) -> Any:
        """An array; *item* checks each element (*what* says what is expected), *length* its size."""
        value = self._typed(name, default, lambda v: isinstance(v, list), "an array")
        if name in self.data and ((length is not None and len(value) != length)
                                  or (item is not None and not all(item(v) for v in value))):
            raise self.error(name, f"expected {what}, not {value!r}")
        return value

    def section(self, name: str, *, required: bool = True) -> Section:
        """The sub-table *name* (an empty one when absent and not *required*)."""
        value = self._typed(name, MISSING if required else {}, lambda v: isinstance(v, dict), "a table")
        child = Section(value, self.file, self.path(name))
        self._children.append(child)
        return child

    def sections(self, name: str, *, required: bool = True) -> list[Section]:
        """The array of tables ``[[name]]`` (empty when absent and not *required*)."""
        value = self._typed(name, MISSING if required else [], lambda v: isinstance(v, list), "an array")
        out = []
        for i, entry in enumerate(value):
            key = f"{self.path(name)}[{i}]"
            if not isinstance(entry, dict):
                raise ConfigError(self.file, key, f"expected a table, not {describe(entry)}")
            out.append(Section(entry, self.file, key))
        self._children.extend(out)
        return out

    def _bounds(self, name: str, value: float, minval: float | None, maxval: float | None,
                above: float | None, below: float | None) -> None:
        if minval is not None and maxval is not None and not minval <= value <= maxval:
            raise self.error(name, f"{value} out of range {minval}..{maxval}")
        if minval is not None and value < minval:
            raise self.error(name, f"{value} is under the minimum {minval}")
        if maxval is not None and value > maxval:
            raise self.error(name, f"{value} is over the maximum {maxval}")
        if above is not None and value <= above:
            raise self.error(name, f"{value} must be above {above}")
        if below is not None and value >= below:
            raise self.error(name, f"{value} must be below {below}")
