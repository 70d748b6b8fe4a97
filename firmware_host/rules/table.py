"""What the engine's seams (actions, dealing, lifecycle, pots) see of the engine: one protocol.

The seams work on the table's state and report through it; they depend on this interface,
not on :class:`~firmware_host.rules.engine.HandEngine`, which provides it. No import cycle.
"""
from __future__ import annotations

from typing import Any, Protocol

from firmware_host.events import Event
from firmware_host.observations import Observation
from firmware_host.rules.checks import Finding
from firmware_host.rules.hand import Hand
from firmware_host.rules.holds import Hold, Postponed, Until
from firmware_host.rules.lineup import Lineup
from firmware_host.rules.profile import Level, Profile


class Table(Protocol):
    """The table's state and its reporting, as the engine's seams use them."""

    profile: Profile
    level: Level
    unit: int
    hand_number: int
    carried: int
    lineup: Lineup
    hand: Hand | None
    hold: Hold | None
    postponed: Postponed

    @property
    def substantial_action(self) -> bool: ...

    @property
    def actor(self) -> int | None: ...

    def route(self, obs: Observation) -> None: ...

    def release(self, until: Until, seat: int | None = None) -> None: ...

    def emit(self, cls: type[Event], t: float, **fields: Any) -> None: ...

    def report(self, t: float, kind: str, procedure: str, *, rule: str = "", seats: tuple[int, ...] = (),
               cards: tuple[str, ...] = ()) -> None: ...

    def irregular(self, t: float, finding: Finding) -> None: ...

    def end_hand(self, t: float, *, voided: bool = False) -> None: ...
