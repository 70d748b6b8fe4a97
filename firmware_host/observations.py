"""Observations: what the table's hardware saw, typed and timestamped.

Drivers produce these; the hand engine consumes them. Every observation is a
frozen dataclass with ``t``, the time in seconds on the table's clock (the
driver's timestamp; the engine never reads a clock). How each is produced by
the hardware is in ``docs/observations.md``.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, get_args

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(r + s for s in SUITS for r in RANKS)
"""The 52 cards, as pokerkit writes them (``'As'``, ``'Td'``...)."""

_ZONE = re.compile(r"^(shoe|muck|burn|pot|seat:(\d{1,2})|bet:(\d{1,2})|board:(flop|turn|river))$")

ConsoleButton = Literal["new-hand", "confirm", "misdeal", "floor"]
Declared = Literal["raise", "all-in", "call", "bet"]


class ObservationError(ValueError):
    """An observation that cannot exist: bad zone, bad card, bad amount."""


def check_card(card: str) -> str:
    """Return *card* if it is one of the 52, else raise :class:`ObservationError`."""
    if card not in DECK:
        raise ObservationError(f"not a card of the deck: {card!r}")
    return card


def check_zone(zone: str, allowed: tuple[str, ...]) -> str:
    """Return *zone* if it is well formed and of a kind in *allowed*."""
    match = _ZONE.match(zone)
    if not match or zone.split(":")[0] not in allowed:
        raise ObservationError(f"bad zone {zone!r}: expected one of {', '.join(allowed)}")
    return zone


def zone_seat(zone: str) -> int | None:
    """The seat number of a ``seat:N`` or ``bet:N`` zone, else None."""
    kind, _, number = zone.partition(":")
    return int(number) if kind in ("seat", "bet") else None


@dataclass(frozen=True)
class CardEntered:
    """A card was read entering a zone (``shoe``, ``seat:N``, ``board:flop|turn|river``, ``muck``, ``burn``).

    ``face_up`` is the shoe's optical sensor (None where the zone cannot tell).
    """

    t: float
    zone: str
    card: str
    face_up: bool | None = None

    def __post_init__(self) -> None:
        check_zone(self.zone, ("shoe", "seat", "board", "muck", "burn"))
        check_card(self.card)


@dataclass(frozen=True)
class _CardAt:
    t: float
    zone: str
    card: str

    def __post_init__(self) -> None:
        check_zone(self.zone, ("shoe", "seat", "board", "muck", "burn"))
        check_card(self.card)


@dataclass(frozen=True)
class CardLeft(_CardAt):
    """A card was no longer read in a zone (debounced by the reader driver)."""


@dataclass(frozen=True)
class ChipsInZone:
    """The camera's stable count of the chips in a zone (``bet:N`` or ``pot``).

    ``amount`` is everything in the zone; ``chips`` is the breakdown as
    ``(denomination, count)`` pairs, largest denomination first.
    """

    t: float
    zone: str
    amount: int
    chips: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        check_zone(self.zone, ("bet", "pot"))
        if self.amount < 0:
            raise ObservationError(f"negative amount {self.amount} in {self.zone}")
        if self.chips and sum(d * n for d, n in self.chips) != self.amount:
            raise ObservationError(f"chips {self.chips} do not add up to {self.amount} in {self.zone}")
        if any(d <= 0 or n < 0 for d, n in self.chips):
            raise ObservationError(f"bad chip breakdown {self.chips} in {self.zone}")


@dataclass(frozen=True)
class ConsolePress:
    """A press on the dealer console: ``new-hand``, ``confirm``, ``misdeal`` or ``floor``."""

    t: float
    button: ConsoleButton

    def __post_init__(self) -> None:
        if self.button not in ("new-hand", "confirm", "misdeal", "floor"):
            raise ObservationError(f"unknown console button {self.button!r}")


@dataclass(frozen=True)
class Declaration:
    """A verbal declaration keyed in by the dealer for the seat in turn (000 §40)."""

    t: float
    seat: int
    declared: Declared
    amount: int | None = None

    def __post_init__(self) -> None:
        if self.declared not in ("raise", "all-in", "call", "bet"):
            raise ObservationError(f"unknown declaration {self.declared!r}")
        if self.amount is not None and self.amount <= 0:
            raise ObservationError(f"declared amount must be positive, not {self.amount}")


@dataclass(frozen=True)
class SeatPresence:
    """A player sat down (with ``stack`` chips, from the hall) or left a seat."""

    t: float
    seat: int
    present: bool
    player: str | None = None
    stack: int | None = None

    def __post_init__(self) -> None:
        if self.present and (self.stack is None or self.stack <= 0):
            raise ObservationError(f"seat {self.seat}: a player sits down with a positive stack")


@dataclass(frozen=True)
class SetLevel:
    """The TD sets the blind level; it applies from the next hand (000 §23)."""

    t: float
    small_blind: int
    big_blind: int
    ante: int = 0
    big_blind_ante: int = 0
    number: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.small_blind < self.big_blind:
            raise ObservationError(f"bad blinds {self.small_blind}/{self.big_blind}")
        if self.ante < 0 or self.big_blind_ante < 0 or (self.ante and self.big_blind_ante):
            raise ObservationError("antes must be non-negative, and either an ante or a big-blind ante")


@dataclass(frozen=True)
class MoveButton:
    """The TD places the button (the draw for the button, or a correction)."""

    t: float
    seat: int


@dataclass(frozen=True)
class ForeignCard:
    """A tag read in *zone* whose UID is in no registered deck (002 C.3)."""

    t: float
    zone: str
    uid: str

    def __post_init__(self) -> None:
        check_zone(self.zone, ("shoe", "seat", "board", "muck", "burn"))


@dataclass(frozen=True)
class WrongBackCard:
    """A card of the table's other deck (another back colour) read in *zone* (002 C.1, C.3)."""

    t: float
    zone: str
    card: str
    deck: str

    def __post_init__(self) -> None:
        check_zone(self.zone, ("shoe", "seat", "board", "muck", "burn"))
        check_card(self.card)


@dataclass(frozen=True)
class DeviceFault:
    """A device reports trouble: ``device`` e.g. ``shoe``, ``reader:seat:3``, ``camera``;
    ``fault`` a short kebab-case name (``heartbeat-timeout``, ``disconnected``,
    ``possibly-missed-card``, ``antenna-open``, ``frozen-frames``...); ``detail`` for people."""

    t: float
    device: str
    fault: str
    detail: str = ""


@dataclass(frozen=True)
class DeviceRecovered:
    """A device that had a fault works again."""

    t: float
    device: str
    detail: str = ""


@dataclass(frozen=True)
class CardExposed:
    """A card seen face up in a seat's card area where it should be face down.

    From the camera ``card`` is None: it sees that a card of the seat lies face up, not which
    one (the engine knows the seat's cards). A script may name the card.
    """

    t: float
    zone: str
    card: str | None = None

    def __post_init__(self) -> None:
        check_zone(self.zone, ("seat",))
        if self.card is not None:
            check_card(self.card)


@dataclass(frozen=True)
class Resolution:
    """The dealer (console) or the TD (hall command) resolves the irregularity on hold.

    ``decision`` is one of the options the irregularity event listed; ``card``
    names a card where the decision needs one.
    """

    t: float
    by: Literal["dealer", "td"]
    decision: str
    card: str | None = None

    def __post_init__(self) -> None:
        if self.by not in ("dealer", "td"):
            raise ObservationError(f"a resolution is by the dealer or the td, not {self.by!r}")
        if self.card is not None:
            check_card(self.card)


@dataclass(frozen=True)
class Pause:
    """The TD pauses (or resumes) the table: while paused, play observations wait."""

    t: float
    paused: bool
    reason: str = ""


@dataclass(frozen=True)
class VoidHand:
    """The TD voids hand number *hand*: every bet returned, the hand replayed."""

    t: float
    hand: int
    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise ObservationError("voiding a hand needs a reason")


Observation: TypeAlias = (
    CardEntered | CardLeft | ChipsInZone | ConsolePress | Declaration | SeatPresence | SetLevel | MoveButton
    | ForeignCard | WrongBackCard | DeviceFault | DeviceRecovered | CardExposed | Resolution | Pause | VoidHand
)

OBSERVATION_TYPES: dict[str, type[Observation]] = {cls.__name__: cls for cls in get_args(Observation)}


def to_dict(obs: Observation) -> dict[str, Any]:
    """A JSON-ready dict of *obs*, with its type name."""
    data: dict[str, Any] = {"type": type(obs).__name__}
    data.update({k: (list(map(list, v)) if k == "chips" else v) for k, v in vars(obs).items()})
    return data


def from_dict(data: Mapping[str, Any]) -> Observation:
    """The observation written by :func:`to_dict`."""
    fields = dict(data)
    cls = OBSERVATION_TYPES.get(fields.pop("type", None))
    if cls is None:
        raise ObservationError(f"unknown observation type in {fields!r}")
    if "chips" in fields:
        fields["chips"] = tuple(tuple(pair) for pair in fields["chips"])
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ObservationError(f"{cls.__name__}: {exc}") from None
