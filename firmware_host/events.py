"""Events: what the hand engine decided, versioned and JSON-serialisable.

Every event carries the table id, the hand number, a per-table sequence
number and the time of the observation that caused it. Events marked
``SECRET`` carry hole or burn cards and must only travel on the secure topics.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

SCHEMA = "pokertable.event"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Event:
    """Common header of every event."""

    KIND: ClassVar[str] = "event"
    SECRET: ClassVar[bool] = False
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of the payload when empty (added to the contract without changing older events)."""

    table: str
    hand: int
    seq: int
    t: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON payload: schema, version, kind, then the fields."""
        body: dict[str, Any] = {"schema": SCHEMA, "version": SCHEMA_VERSION, "kind": self.KIND}
        body.update(_plain(dataclasses.asdict(self)))
        for name in self.OPTIONAL:
            if not body[name]:
                del body[name]
        return body

    def to_json(self) -> str:
        """One line of canonical JSON (sorted keys): same event, same bytes."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class HandStarted(Event):
    """A hand began: button, blinds, who is dealt in and their stacks."""

    KIND: ClassVar[str] = "hand-started"
    button: int
    small_blind_seat: int | None
    big_blind_seat: int
    small_blind: int
    big_blind: int
    ante: int
    big_blind_ante: int
    seats: tuple[int, ...]
    stacks: tuple[int, ...]
    posted: tuple[int, ...]
    waiting: tuple[int, ...] = ()
    replay: bool = False
    rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class HoleCardDealt(Event):
    """A hole card reached a seat. Secret until shown."""

    KIND: ClassVar[str] = "hole-card-dealt"
    SECRET: ClassVar[bool] = True
    seat: int
    card: str


@dataclass(frozen=True)
class CardBurned(Event):
    """A burn card was taken before a street. Secret."""

    KIND: ClassVar[str] = "card-burned"
    SECRET: ClassVar[bool] = True
    street: str
    card: str


@dataclass(frozen=True)
class ActionTaken(Event):
    """A seat acted: ``fold``, ``check``, ``call``, ``bet`` or ``raise``.

    ``total`` is the seat's whole bet this street after the action; ``added``
    the chips it put in; ``returned``/``owed`` the change given back and the
    chips the dealer must have added; ``rule`` the rule that decided it.
    """

    KIND: ClassVar[str] = "action"
    seat: int
    action: str
    street: str
    total: int
    added: int
    all_in: bool = False
    returned: int = 0
    owed: int = 0
    rule: str = ""
    reason: str = ""


@dataclass(frozen=True)
class BoardDealt(Event):
    """Board cards were accepted for a street."""

    KIND: ClassVar[str] = "board-dealt"
    street: str
    cards: tuple[str, ...]


@dataclass(frozen=True)
class HandShown(Event):
    """A seat's hole cards were tabled at showdown: now public."""

    KIND: ClassVar[str] = "hand-shown"
    seat: int
    cards: tuple[str, ...]
    rank: str


@dataclass(frozen=True)
class Pot:
    """A pot (0 = main, then side pots): the seats that contested it, its winners, their shares and hands."""

    pot: int
    amount: int
    seats: tuple[int, ...]
    winners: tuple[int, ...]
    amounts: tuple[int, ...]
    ranks: tuple[str, ...]


@dataclass(frozen=True)
class PotAwarded(Pot, Event):
    """A pot went to its winners; the rule that placed an odd chip, and the chips carried to the next pot."""

    KIND: ClassVar[str] = "pot-awarded"
    odd_chip_rule: str = ""
    carried: int = 0


@dataclass(frozen=True)
class HandEnded(Event):
    """The hand is over: every seat's stack, and chips carried to the next pot."""

    KIND: ClassVar[str] = "hand-ended"
    seats: tuple[int, ...]
    stacks: tuple[int, ...]
    carried: int = 0
    voided: bool = False


@dataclass(frozen=True)
class Irregularity(Event):
    """Something the rules do not allow: the rule that applies and what to do."""

    KIND: ClassVar[str] = "irregularity"
    irregularity: str
    rule: str
    seats: tuple[int, ...]
    procedure: str
    cards: tuple[str, ...] = ()
    substantial_action: bool = False
    procedure_fr: str = ""
    options: tuple[str, ...] = ()
    needs_floor: bool = False


@dataclass(frozen=True)
class IrregularityResolved(Event):
    """The irregularity on hold was resolved: by whom, how, and what it did."""

    KIND: ClassVar[str] = "irregularity-resolved"
    OPTIONAL: ClassVar[frozenset[str]] = frozenset({"board"})
    irregularity: str
    rule: str
    by: str
    decision: str
    effect: str
    cards: tuple[str, ...] = ()
    board: tuple[str, ...] = ()
    """The board after the resolution, when it changed it (a four-card flop, a card returned): public."""


@dataclass(frozen=True)
class Notice(Event):
    """Something to know that is not an irregularity: ``table-paused``, ``table-resumed`` (the TD),
    ``hand-voided`` (the TD voided the hand), ``device-recovered`` (a device works again)."""

    KIND: ClassVar[str] = "notice"
    notice: str
    text: str
    rule: str = ""


NOTICES = ("table-paused", "table-resumed", "hand-voided", "device-recovered")
"""The kinds of :class:`Notice`."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.KIND: cls
    for cls in (HandStarted, HoleCardDealt, CardBurned, ActionTaken, BoardDealt, HandShown,
                PotAwarded, HandEnded, Irregularity, IrregularityResolved, Notice)
}


def from_dict(body: dict[str, Any]) -> Event:
    """The event whose payload is *body* (as written by :meth:`Event.to_dict`)."""
    if body.get("schema") != SCHEMA or body.get("version") != SCHEMA_VERSION:
        raise ValueError(f"not a {SCHEMA} v{SCHEMA_VERSION} payload")
    cls = EVENT_TYPES[body["kind"]]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in body.items() if k in fields}
    return cls(**values)
