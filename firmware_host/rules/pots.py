"""Showdown and pots: hands tabled, pots pushed to their winners, the odd chip, the end of the hand.

pokerkit decides who wins what (:meth:`~.game.Game.push_pots`); here the chips
carried from the last hand join the main pot (004 B.b) and the events are told.

>>> from firmware_host.rules.game import PotResult
>>> pushed = PotResult(pot=0, amount=250, seats=(2, 3), winners=(2, 3), amounts=(100, 100), ranks=("", ""),
...                    withheld=50)
>>> won = award(pushed, carried=50, unit=25)
>>> won.pot.amounts, won.share, won.carried
((125, 125), 25, 50)
>>> spread_odd_chips((175, 100, 100, 100), unit=25)   # pokerkit gave the three odd chips to the first
(125, 125, 125, 100)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from firmware_host.events import HandShown, Pot, PotAwarded
from firmware_host.rules.chips import odd_chip_divmod
from firmware_host.rules.game import PotResult
from firmware_host.rules.profile import Profile

if TYPE_CHECKING:
    from firmware_host.rules.table import Table


@dataclass(frozen=True)
class Award:
    """A pot as awarded: with the chips carried in, each winner's share of them, and what is carried on."""

    pot: Pot
    share: int        # carried chips each winner of the main pot took (004 B.b)
    carried: int      # chips carried to the next pot after this one


def spread_odd_chips(amounts: tuple[int, ...], unit: int) -> tuple[int, ...]:
    """A split pot's shares (winners in position order, first left of the button) with its odd chips
    given one by one from the left of the button (000 §20A, the TDA practice with three or more winners);
    pokerkit gives them all to the first winner."""
    if len(amounts) < 3:
        return amounts
    share = min(amounts)
    extra = sum(amounts) - share * len(amounts)
    chips = extra // unit
    spread = [share + (unit if k < chips else 0) for k in range(len(amounts))]
    spread[0] += extra - chips * unit            # never more than what pokerkit pushed
    return tuple(spread)


def award(pushed: PotResult, carried: int, unit: int) -> Award:
    """Add the *carried* chips to the main pot, split in whole chips of *unit*; carry on what is left.

    The odd chips pokerkit withheld from *pushed* (004 B.b) are carried on too; those it gave to the
    first winner are spread one by one from the left of the button (:func:`spread_odd_chips`).
    """
    amounts, share, carried_in = spread_odd_chips(pushed.amounts, unit), 0, 0
    if pushed.pot == 0 and carried:
        carried_in = carried
        share, carried = odd_chip_divmod(unit, False)(carried_in, len(amounts))
        amounts = tuple(a + share for a in amounts)
    pot = Pot(pot=pushed.pot, amount=pushed.amount + carried_in, seats=pushed.seats, winners=pushed.winners,
              amounts=amounts, ranks=pushed.ranks)
    return Award(pot, share, carried + pushed.withheld)


def odd_chip_rule(pot: Pot, profile: Profile) -> str:
    """The rule that placed a split pot's odd chip: kept for the next pot (004 B.b) or left of the button
    (000 §20A); none for a single winner."""
    if len(pot.winners) < 2:
        return ""
    return "004 B.b" if profile.odd_chip == "next-pot" else "000 §20A"


def show(engine: Table, seat: int, tabled: bool, t: float) -> None:
    """The seat due at showdown tables its hand, or mucks it."""
    assert engine.hand is not None
    game = engine.hand.game
    game.show(tabled)
    if tabled:
        engine.emit(HandShown, t, seat=seat, cards=game.hole(seat), rank=game.rank(seat))


def settle(engine: Table, t: float) -> None:
    """Let pokerkit finish what needs no observation: all-in showdown, pots, the end of the hand."""
    hand = engine.hand
    if hand is None:
        return
    game = hand.game
    if game.all_in_runout:
        while (seat := game.showdown_seat) is not None:  # 000 §16: all-in hands are tabled
            show(engine, seat, True, t)
    if game.actor is None and game.pots_due:      # pots are due only once the betting is over
        for pushed in game.push_pots():
            won = award(pushed, engine.carried, engine.unit)
            # what each winner takes beyond pokerkit's push (carried chips, odd chips spread: 000 §20A)
            for seat, took, pushed_share in zip(won.pot.winners, won.pot.amounts, pushed.amounts):
                if took != pushed_share:
                    hand.bonus[seat] = hand.bonus.get(seat, 0) + took - pushed_share
            engine.carried = won.carried
            engine.emit(PotAwarded, t, **vars(won.pot), odd_chip_rule=odd_chip_rule(won.pot, engine.profile),
                        carried=won.carried)
    if game.over:
        engine.end_hand(t)
