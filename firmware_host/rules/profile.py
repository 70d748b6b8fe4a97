"""House-rules profiles: one TOML file per house rulebook, loaded into frozen dataclasses.

A profile says what differs between houses: seats, the clock, the betting and
seating variants, the odd chip, substantial action, the chip set, the blind
structure and the irregularity procedures. The five built-in profiles
``000`` … ``004`` live in this package's ``profiles/`` folder, one per rulebook.

Every key is checked against the dataclass fields by introspection, so a field
added to :class:`~firmware_host.rules.betting.BettingRules` or
:class:`~firmware_host.rules.seating.SeatingRules` is accepted in ``[betting]`` or
``[seating]`` at once (and takes its default when left out).

>>> profile = builtin_profile("004")
>>> profile.clock.action_seconds, profile.odd_chip, profile.smallest_chip
(60, 'next-pot', 50)
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

from firmware_host.configfile import ConfigError, Section, read_toml
from firmware_host.rules.betting import BettingRules
from firmware_host.rules.seating import SeatingRules

__all__ = [
    "Chip", "Clock", "Irregularities", "Level", "Profile",
    "builtin_ids", "builtin_profile", "load_profile", "resolve_profile",
]

OddChip = Literal["left-of-button", "next-pot"]
SubstantialAction = Literal["tda-36", "two-actions"]
ExposedCard = Literal["misdeal", "replace-with-burn"]
OwnExposure = Literal["live-penalty", "dead", "dead-unless-nuts"]
PrematureCard = Literal["tda-rp5", "art-76", "discard"]
MissedBurn = Literal["board-stands", "art-76"]

MIN_SEATS, MAX_SEATS = 2, 10
T = TypeVar("T")


@dataclass(frozen=True)
class Clock:
    """The clock once "time" is called on a player.

    action_seconds
        Seconds to act (000 §29: 25; 001: 30; 002: 60; 003 art. 62: 45; 004 F.a: 60).
    extension_seconds
        Further seconds counted down before the hand is dead (000 §29: 5; 002: 10).
    """

    action_seconds: int
    extension_seconds: int

    @property
    def total_seconds(self) -> int:
        return self.action_seconds + self.extension_seconds


@dataclass(frozen=True)
class Chip:
    """One denomination of the house's chip set, as the chip camera sees it."""

    value: int
    colour: str


@dataclass(frozen=True, kw_only=True)
class Level:
    """One level of the blind structure.

    ``minutes = 0`` means the level lasts until the end (004: last level
    "Indéterminé"); only the last level may have it.
    """

    number: int
    small_blind: int
    big_blind: int
    ante: int = 0
    big_blind_ante: int = 0
    minutes: int


@dataclass(frozen=True)
class Irregularities:
    """The irregularity procedures on which the rulebooks disagree.

    exposed_card
        One hole card exposed by dealer error during the deal.
        ``"misdeal"``: the hand is redealt (003 art. 77, 004 H.a);
        ``"replace-with-burn"``: the player gets the next card, dealt last, and
        the exposed card becomes the burn card of the flop (002 C.2; 000 §35A5
        makes no misdeal of it, the TDA practice replaces it). In every house
        the first or second card dealt, or two exposed cards, is a misdeal.
    own_exposure
        A player shows his own cards while the action is open.
        ``"live-penalty"``: the hand stays live, a penalty may follow (000 §68, 004 H.b);
        ``"dead"``: the hand is dead (001 'Annonce de sa main', 002 C.6);
        ``"dead-unless-nuts"``: the hand is shown to all and dead unless the
        action is closed or it is the nuts (003 art. 48).
    premature_card
        Board cards dealt before the betting round ended.
        ``"tda-rp5"``: TDA recommended procedure 5 (000 §39);
        ``"art-76"``: 003 art. 76 (premature flop before any action: misdeal, etc.);
        ``"discard"``: the premature cards are out of play (002 C.3).
    missed_burn
        A street dealt without a burn card, or with two.
        ``"board-stands"``: corrected before betting on that street starts, an
        exposed board card stays, later streets are dealt as if no error (002 C.3);
        ``"art-76"``: the card dealt unburnt becomes the burn card and the next
        card takes its place (003 art. 76).
    button_missing_card
        The deal ends with the button one card short.
        ``"may-receive"``: the button may receive its missing card (000 §35B, §37);
        ``"misdeal"``: an incorrect number of cards is a misdeal (002 C.2, 003 art. 77).
    two_decks
        Two decks of different back colours alternate at the table; a card of
        the other back seen in a hand voids the hand, one found in the stub
        does not (002 C.1, C.3).
    """

    exposed_card: ExposedCard
    own_exposure: OwnExposure
    premature_card: PrematureCard
    missed_burn: MissedBurn
    button_missing_card: Literal["may-receive", "misdeal"]
    two_decks: bool


@dataclass(frozen=True)
class Profile:
    """The house rules of one rulebook; ``chips`` sorted by value, ``levels`` in play order."""

    id: str
    house: str
    rulebook: str
    seats: int
    clock: Clock
    betting: BettingRules
    seating: SeatingRules
    odd_chip: OddChip
    substantial_action: SubstantialAction
    chips: tuple[Chip, ...]
    levels: tuple[Level, ...]
    starting_stack: int
    irregularities: Irregularities

    @property
    def smallest_chip(self) -> int:
        """The smallest denomination in play: every amount is a multiple of it (000 §20)."""
        return self.chips[0].value


# -- loading -----------------------------------------------------------------

def load_profile(path: str | PathLike[str]) -> Profile:
    """Read and check the profile TOML file at *path*; raise :class:`ConfigError` if invalid."""
    path = Path(path)
    return _Loader(path.name).profile(read_toml(path))


def builtin_ids() -> tuple[str, ...]:
    """The ids of the profiles shipped with the package, sorted: ``("000", …, "004")``."""
    folder = resources.files(__package__).joinpath("profiles")
    return tuple(sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml")))


@functools.cache
def builtin_profile(profile_id: str) -> Profile:
    """The built-in profile *profile_id* (``"000"`` … ``"004"``): read once (a shipped file, a frozen profile;
    7 ms each time, hundreds of times in a simulated session)."""
    ids = builtin_ids()
    if profile_id not in ids:
        raise ValueError(f"no built-in profile {profile_id!r}; there are {', '.join(ids)}")
    resource = resources.files(__package__).joinpath("profiles", f"{profile_id}.toml")
    with resources.as_file(resource) as path:
        return load_profile(path)


def resolve_profile(name: str) -> Profile:
    """A built-in profile by its id (``"000"`` … ``"004"``), else the profile file *name*.

    The one way a profile is named on the command line, in a config file or in a recording.
    """
    ids = builtin_ids()
    if name in ids:
        return builtin_profile(name)
    if not Path(name).exists():
        raise ConfigError(name, "", f"neither a built-in profile ({', '.join(ids)}) nor a profile file")
    return load_profile(name)


class _Loader:
    """Builds the profile's dataclasses from parsed TOML through the config loader's sections:
    fields by introspection (a field added to a dataclass is a key at once), each read with the
    getter of its type; every error names *file* and the key path."""

    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, key: str, reason: str) -> ConfigError:
        return ConfigError(self.file, key, reason)

    def profile(self, data: dict[str, Any]) -> Profile:
        profile = self.build(Profile, Section(data, self.file))
        chips = tuple(sorted(profile.chips, key=lambda c: c.value))
        self.check(profile, chips)
        return dataclasses.replace(profile, chips=chips)

    def build(self, cls: type[T], section: Section) -> T:
        hints = typing.get_type_hints(cls)
        values = {}
        for field in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass
            if section.has(field.name):
                values[field.name] = self.read(section, field.name, hints[field.name])
            elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                section.get(field.name)  # raises: missing required key
        section.finish()
        return cls(**values)

    def read(self, section: Section, name: str, hint: Any) -> Any:
        """The value of *name* as the type *hint* says."""
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if dataclasses.is_dataclass(hint):
            return self.build(typing.cast(type[Any], hint), section.section(name))
        if origin is Literal:
            return section.get_choice(name, args)
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            if dataclasses.is_dataclass(args[0]):
                return tuple(self.build(typing.cast(type[Any], args[0]), item) for item in section.sections(name))
            raise TypeError(f"{section.path(name)}: profiles hold arrays of tables only")
        if origin in (Union, types.UnionType):
            errors = []
            for arg in args:
                if arg is not type(None):
                    try:
                        return self.read(section, name, arg)
                    except ConfigError as e:
                        errors.append(e.reason)
            raise section.error(name, " or ".join(errors))
        getters: dict[Any, Callable[[str], Any]] = {int: section.get_int, str: section.get_str,
                                                    bool: section.get_bool, float: section.get_float}
        if hint not in getters:
            raise TypeError(f"{section.path(name)}: profiles cannot hold a {hint!r}")
        return getters[hint](name)

    # semantic checks, beyond types
    def check(self, p: Profile, chips: tuple[Chip, ...]) -> None:
        if not MIN_SEATS <= p.seats <= MAX_SEATS:
            raise self.error("seats", f"{p.seats} is not in {MIN_SEATS}..{MAX_SEATS}")
        if p.clock.action_seconds < 1:
            raise self.error("clock.action_seconds", f"{p.clock.action_seconds} is not positive")
        if p.clock.extension_seconds < 0:
            raise self.error("clock.extension_seconds", f"{p.clock.extension_seconds} is negative")
        for name in ("id", "house", "rulebook"):
            if not getattr(p, name).strip():
                raise self.error(name, "is empty")

        if not p.chips:
            raise self.error("chips", "the chip set is empty")
        values: set[int] = set()
        colours: set[str] = set()
        for i, chip in enumerate(p.chips):
            if chip.value <= 0:
                raise self.error(f"chips[{i}].value", f"{chip.value} is not positive")
            if chip.value in values:
                raise self.error(f"chips[{i}].value", f"{chip.value} is not unique")
            if not chip.colour.strip():
                raise self.error(f"chips[{i}].colour", "is empty")
            if chip.colour in colours:
                raise self.error(f"chips[{i}].colour", f"{chip.colour!r} is not unique")
            values.add(chip.value)
            colours.add(chip.colour)
        unit = chips[0].value

        if p.starting_stack <= 0 or p.starting_stack % unit:
            raise self.error("starting_stack", f"{p.starting_stack} is not a positive multiple of "
                             f"the smallest chip {unit}")
        if not p.levels:
            raise self.error("levels", "the blind structure is empty")
        previous: Level | None = None
        for i, level in enumerate(p.levels):
            at = f"levels[{i}]"
            if previous is not None and level.number <= previous.number:
                raise self.error(f"{at}.number", f"levels do not increase: {level.number} follows "
                                 f"{previous.number}")
            if level.small_blind <= 0:
                raise self.error(f"{at}.small_blind", f"{level.small_blind} is not positive")
            if level.big_blind <= level.small_blind:
                raise self.error(f"{at}.big_blind", f"big blind {level.big_blind} is not greater "
                                 f"than small blind {level.small_blind}")
            for name in ("small_blind", "big_blind", "ante", "big_blind_ante"):
                amount = getattr(level, name)
                if amount < 0 or amount % unit:
                    raise self.error(f"{at}.{name}", f"{amount} cannot be paid with the smallest "
                                     f"chip {unit}")
            if previous is not None and (
                level.small_blind < previous.small_blind or level.big_blind < previous.big_blind
                or _amounts(level) == _amounts(previous)
            ):
                raise self.error(at, f"levels do not increase: level {level.number} "
                                 f"{level.small_blind}/{level.big_blind} follows level "
                                 f"{previous.number} {previous.small_blind}/{previous.big_blind}")
            if level.minutes < 0 or (level.minutes == 0 and i != len(p.levels) - 1):
                raise self.error(f"{at}.minutes", f"{level.minutes} is not positive (only the last "
                                 "level may be 0, until the end)")
            previous = level


def _amounts(level: Level) -> tuple[int, int, int, int]:
    return level.small_blind, level.big_blind, level.ante, level.big_blind_ante
