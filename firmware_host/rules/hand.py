"""The hand in progress: pokerkit's game and what the engine tracks beside it, in small parts.

Plain state with a few queries; the engine's handlers change it. Units: chips.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from firmware_host.observations import Declaration
from firmware_host.rules.card_path import CardPath
from firmware_host.rules.game import Game
from firmware_host.rules.profile import SubstantialAction


@dataclass
class Deal:
    """The deal of the hole cards: how far it went and what went wrong in it."""

    dealt: int = 0                                             # hole cards dealt so far
    face_up_in_deck: int = 0                                   # cards drawn face up while dealing (000 §35A1)
    exposed: int = 0                                           # hole cards exposed by the dealer (000 §35A5)
    seen_up: set[str] = field(default_factory=set)             # cards (seats, after the deal) seen face up
    replace: dict[int, str] = field(default_factory=dict)      # seat -> exposed card to replace (002 C.2)


@dataclass
class Board:
    """Board cards read on a street's spot, not yet the whole street; the action count at the flop;
    the card on the burn spot that will burn the next street; cards counted as burned that still lie
    where they were opened (003 art. 76: the dealer moves them to the burn spot)."""

    waiting: list[str] = field(default_factory=list)
    flop_actions: int | None = None
    burn_ready: str | None = None
    burned_elsewhere: set[str] = field(default_factory=set)


@dataclass
class BetZones:
    """What the camera last counted in each seat's bet zone, and the declarations keyed in (000 §40)."""

    amount: dict[int, int] = field(default_factory=dict)
    chips: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    declared: dict[int, Declaration] = field(default_factory=dict)


@dataclass
class ActionCount:
    """Voluntary actions this hand (blinds and antes do not count), and those that put chips in."""

    count: int = 0
    with_chips: int = 0

    def substantial(self, rule: SubstantialAction) -> bool:
        """Has substantial action occurred (000 §36; 003 art. 47 'two actions')?"""
        if rule == "two-actions":
            return self.count >= 2
        return self.count >= 3 or (self.count >= 2 and self.with_chips >= 1)


@dataclass
class Hand:
    """What the engine tracks about the hand in progress, beside pokerkit's :class:`~.game.Game`."""

    game: Game
    starting: dict[int, int]                                   # seat -> stack before the blinds
    cards: CardPath = field(default_factory=CardPath)
    deal: Deal = field(default_factory=Deal)
    board: Board = field(default_factory=Board)
    bets: BetZones = field(default_factory=BetZones)
    actions: ActionCount = field(default_factory=ActionCount)
    mucked: set[int] = field(default_factory=set)              # seats that mucked at showdown
    bonus: dict[int, int] = field(default_factory=dict)  # won beyond pokerkit's push: carried (004 B.b), odd (000 §20A)

    @property
    def dealt_all(self) -> bool:
        """Has every seat dealt in its two hole cards (pokerkit expects no more)?"""
        return self.deal.dealt == 2 * len(self.game.order)

    def final_stacks(self, voided: bool) -> dict[int, int]:
        """Each seat's stack now, or as it started if the hand is void; with the carried chips won."""
        stacks = dict(self.starting) if voided else self.game.stacks()
        for seat, bonus in self.bonus.items():
            stacks[seat] += bonus
        return stacks

    def waiting_for(self) -> str:
        """What the table waits for, for people."""
        game = self.game
        if game.expects_hole:
            return "hole cards"
        if game.expects_burn:
            return "the burn card"
        if game.board_count_expected:
            return "board cards"
        return "the next observation"
