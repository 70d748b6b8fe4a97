"""Waiting: the irregularity that holds the hand for the floor, and observations put off until later.

An observation that cannot be applied yet is not lost: it is postponed
:class:`Until` something happens, then applied as if it arrived then. One queue,
:class:`Postponed`, keeps them all, in the order they came.

>>> from firmware_host.observations import ChipsInZone
>>> waiting = Postponed()
>>> waiting.add(ChipsInZone(1.0, "bet:4", 100), Until.TURN, seat=4)
1
>>> waiting.take(Until.TURN, seat=3), len(waiting.take(Until.TURN, seat=4))
([], 1)
"""
from __future__ import annotations

import enum
import random
from collections.abc import Callable
from dataclasses import dataclass

from firmware_host.observations import Observation
from firmware_host.rules.hand import Hand


class Until(enum.Enum):
    """What a postponed observation waits for."""

    RULING = "ruling"          # the floor rules on the irregularity on hold, or the TD resumes play
    TURN = "turn"              # its seat's turn to act: an action out of turn
    DEAL_END = "deal-end"      # the end of the deal: the button receives its missing card (000 §37)


@dataclass(frozen=True, slots=True)
class _Waiting:
    until: Until
    seat: int | None
    obs: Observation


class Postponed:
    """Observations waiting, each until something happens; a seat waits for its turn with one action only."""

    def __init__(self) -> None:
        self._waiting: list[_Waiting] = []

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def add(self, obs: Observation, until: Until, seat: int | None = None) -> int:
        """Put *obs* off until *until* (for *seat*: its turn); return how many now wait for it."""
        if until is Until.TURN:        # the seat's latest action replaces the one it made before
            self._waiting = [w for w in self._waiting if (w.until, w.seat) != (until, seat)]
        self._waiting.append(_Waiting(until, seat, obs))
        return sum(w.until is until for w in self._waiting)

    def waits(self, until: Until, seat: int | None = None) -> bool:
        """Is any observation waiting for *until* (for *seat*)?"""
        return any(w.until is until and w.seat == seat for w in self._waiting)

    def take(self, until: Until, seat: int | None = None) -> list[Observation]:
        """Remove and return what waits for *until* (for *seat*), in the order it came."""
        if not self._waiting:
            return []
        taken = [w.obs for w in self._waiting if w.until is until and w.seat == seat]
        if taken:
            self._waiting = [w for w in self._waiting if not (w.until is until and w.seat == seat)]
        return taken

    def drop(self, *untils: Until) -> None:
        """Forget what waits for any of *untils* (the hand it belonged to is over)."""
        if self._waiting:
            self._waiting = [w for w in self._waiting if w.until not in untils]


# -- the irregularity on hold ------------------------------------------------------------------

@dataclass(frozen=True)
class Hold:
    """An irregularity waiting for the dealer or the TD: the resolutions allowed, the first recommended."""

    kind: str
    rule: str
    options: tuple[str, ...]
    seats: tuple[int, ...]
    cards: tuple[str, ...]


VOIDING = frozenset({"misdeal", "void-hand"})
"""Decisions that end the hand: it is void and replayed (000 §35C)."""


def random_pick(hold: Hold, seed: str) -> str:
    """The floor's random pick among the four-card flop's cards (000 §39), reproducible from *seed*."""
    return random.Random(seed).choice(hold.cards)


def _random_burn(hand: Hand, hold: Hold, card: str) -> str:
    extra = hold.cards[3]           # the fourth card read on the flop
    if card != extra:
        hand.game.replace_board_card(card, extra)
        hand.cards.read(extra, "board:flop")
    hand.cards.hold_for_burn(card)
    return f"{card} is the turn's burn card; the flop is {' '.join(hand.game.board)}"


def _return_card(hand: Hand, hold: Hold, card: str) -> str:
    for c in hold.cards:
        hand.cards.to_stub(c)
    return f"{' '.join(hold.cards)} back in the stub, reshuffled; dealt again without a new burn"


def _restub_burn(hand: Hand) -> str:
    """The card burned early goes back on top of the stub (003 art. 76); what was done, for people."""
    burn, hand.board.burn_ready = hand.board.burn_ready, None
    if burn is None:
        return ""
    hand.cards.to_stub(burn)
    return f"{burn} back on top of the stub; "


def _undo_premature(hand: Hand, hold: Hold) -> tuple[str, str]:
    """The early burn and the cards opened after the first back on the stub: (what was done, the first)."""
    opened, *others = hold.cards
    done = _restub_burn(hand)
    for c in others:
        hand.cards.to_stub(c)
    return done, opened


def _burn_for_turn(hand: Hand, hold: Hold, card: str) -> str:
    done, opened = _undo_premature(hand, hold)
    hand.cards.hold_for_burn(opened)
    return (f"{done}{opened} is the turn's burn card; once the flop's betting is over, the third card from the "
            "bottom of the stub is opened as the turn, without a new burn")


def _burn_for_river(hand: Hand, hold: Hold, card: str) -> str:
    done, opened = _undo_premature(hand, hold)
    hand.cards.kill(opened)
    return (f"{done}{opened} is burned, out of play; once the turn's betting is over, the first card of the stub "
            "is burned and the next one opened as the river")


def _dead_hand(hand: Hand, hold: Hold, card: str) -> str:
    seat = hold.seats[0]
    hand.game.kill(seat)
    for c in hold.cards:
        hand.cards.kill(c)
    return f"seat {seat}'s hand is dead: {' '.join(hold.cards)} to the muck, its chips stay in the pot"


def _discard(hand: Hand, hold: Hold, card: str) -> str:
    for c in hold.cards:
        hand.cards.kill(c)
    return f"{' '.join(hold.cards)} out of play"


def _replace(hand: Hand, hold: Hold, card: str) -> str:
    hand.deal.replace[hold.seats[0]] = hold.cards[0]
    return f"seat {hold.seats[0]} gets the next card last; {hold.cards[0]} will be the flop's burn card"


def _give_card(hand: Hand, hold: Hold, card: str) -> str:
    return f"seat {hold.seats[0]} receives its missing card"


_EFFECTS: dict[str, Callable[[Hand, Hold, str], str]] = {
    "random-burn": _random_burn,        # 000 §39
    "return-card": _return_card,        # 000 §39 (TDA RP-5), 003 art. 76
    "discard": _discard,                # 002 C.3
    "dead-hand": _dead_hand,            # 000 §38, 003 art. 78
    "burn-for-turn": _burn_for_turn,    # 003 art. 76, premature turn
    "burn-for-river": _burn_for_river,  # 003 art. 76, premature river
    "replace": _replace,                # 002 C.2
    "give-card": _give_card,            # 000 §37
}


def apply(decision: str, hand: Hand, hold: Hold, card: str = "") -> str:
    """Apply *decision* (not a voiding one) to *hand*; return what it did, for people.

    *card* is the card the decision names (``random-burn``: the floor's pick).
    """
    return _EFFECTS[decision](hand, hold, card)


def void_effect(decision: str) -> str:
    """What a voiding decision does, for people (000 §35C)."""
    if decision == "misdeal":
        return "misdeal: the hand is void and replayed exactly (000 §35C)"
    return "the hand is void, every bet returned; the next hand is a replay"
