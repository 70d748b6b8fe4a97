"""Play: chips pushed become actions, cards in the muck a fold, checks implied, actions out of turn.

Handlers of the engine, through its :class:`~.table.Table` protocol. Units: chips. What a push means
is :func:`.betting.rule`'s to say; pokerkit then says whether it is legal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, cast

from firmware_host.events import ActionTaken
from firmware_host.observations import CardEntered, ChipsInZone, Declaration, Observation, zone_seat
from firmware_host.rules import betting, checks, pots
from firmware_host.rules.chips import added, breakdown, chip_list
from firmware_host.rules.game import Game, GameError
from firmware_host.rules.hand import Hand
from firmware_host.rules.holds import Until
from firmware_host.rules.profile import Profile

if TYPE_CHECKING:
    from firmware_host.rules.table import Table


def chips_in_zone(engine: Table, obs: ChipsInZone) -> None:
    """The camera's count of a bet zone: more chips than before is the seat's action."""
    hand, seat = engine.hand, zone_seat(obs.zone)
    if seat is None:                # the pot: chips gathered there decide nothing
        return
    if hand is None:
        if obs.amount:
            engine.report(obs.t, "chips-without-hand", f"{obs.amount} in {obs.zone} between hands", seats=(seat,))
        return
    bets = hand.bets
    if obs.amount <= bets.amount.get(seat, 0):
        bets.amount[seat], bets.chips[seat] = obs.amount, obs.chips
        return
    if deal_incomplete(engine, hand, obs):
        return
    if seat not in hand.game.in_hand:
        return engine.report(obs.t, "chips-from-seat-not-in-hand",
                             f"{obs.amount} in {obs.zone}, but seat {seat} has no live hand", seats=(seat,))
    if seat != hand.game.actor:
        return out_of_turn(engine, hand, seat, obs)
    _push(engine, hand, seat, obs)


def declaration(engine: Table, obs: Declaration) -> None:
    """A declaration keyed in for a seat: it rules its next push (000 §40)."""
    hand = engine.hand
    if hand is None or obs.seat not in hand.game.in_hand:
        return engine.report(obs.t, "declaration-without-hand", f"seat {obs.seat} has no live hand",
                             seats=(obs.seat,))
    hand.bets.declared[obs.seat] = obs


def denominations(profile: Profile, unit: int) -> tuple[int, ...]:
    """The chip values in play: the profile's, and the smallest chip of the table."""
    values = tuple(c.value for c in profile.chips)
    return values if unit in values else values + (unit,)


def _counted(hand: Hand, seat: int, obs: ChipsInZone) -> tuple[int, ...] | None:
    """The chips *seat* added, one entry per chip, as the camera counted them; None if they do not add up."""
    before = hand.bets.amount.get(seat, 0)
    new = added(obs.chips, hand.bets.chips.get(seat, ()), before) if obs.chips else None
    return new if new is not None and sum(new) == obs.amount - before else None


def _situation(game: Game, seat: int) -> betting.Situation:
    """What *seat*, in turn to act, faces, for :func:`.betting.rule` (which refuses a street not bet on)."""
    return betting.Situation(
        street=cast(betting.Street, game.street), big_blind=game.big_blind,
        highest_bet=max([game.bet(s) for s in game.order]), own_bet=game.bet(seat), stack=game.stack(seat),
        last_increment=game.last_increment, previous_bet=game.last_full_bet, may_raise=game.may_raise())


def _push(engine: Table, hand: Hand, seat: int, obs: ChipsInZone) -> None:
    """The seat in turn pushed chips: the house's betting rules make it an action."""
    game = hand.game
    new = _counted(hand, seat, obs)
    if new is None:           # the amount broken into the chips in play
        try:
            new = chip_list(breakdown(obs.amount - hand.bets.amount.get(seat, 0),
                                      denominations(engine.profile, engine.unit)))
        except ValueError as exc:
            return engine.report(obs.t, "chips-unreadable", f"seat {seat}: {exc}: the dealer confirms the amount",
                                 seats=(seat,))
    declared = hand.bets.declared.pop(seat, None)
    situation = _situation(game, seat)
    push = betting.Push(chips=new, declared=declared.declared if declared else None,
                        declared_amount=declared.amount if declared else None)
    try:
        ruling = betting.rule(situation, push, engine.profile.betting)
        if ruling.kind in ("check", "call"):
            game.check_or_call()
        else:
            game.raise_to(ruling.total)
    except (betting.BettingError, GameError) as exc:
        return engine.report(obs.t, "push-refused", f"seat {seat} pushed {sum(new)}: {exc}", seats=(seat,))
    hand.bets.amount[seat] = max(obs.amount, ruling.total)
    hand.bets.chips[seat] = obs.chips
    hand.actions.count += 1
    hand.actions.with_chips += ruling.kind != "check"
    engine.emit(ActionTaken, obs.t, seat=seat, action=ruling.kind, street=situation.street, total=ruling.total,
                added=ruling.total - situation.own_bet, all_in=ruling.all_in, returned=ruling.returned,
                owed=ruling.owed, rule=ruling.rule, reason=ruling.reason)
    after_action(engine, obs.t)


def fold(engine: Table, hand: Hand, seat: int, obs: CardEntered) -> None:
    """The seat in turn's cards reached the muck: it folds (000 §3; facing no bet too, 000 §58)."""
    game = hand.game
    street = game.street
    try:
        game.fold()
    except GameError as exc:
        hand.cards.read(obs.card, f"seat:{seat}")   # still the seat's card
        return engine.report(obs.t, "fold-refused", f"seat {seat}: {exc}", seats=(seat,))
    hand.actions.count += 1
    engine.emit(ActionTaken, obs.t, seat=seat, action="fold", street=street, total=0, added=0, rule="000 §3",
                reason="cards reached the muck")
    after_action(engine, obs.t)


def check(engine: Table, hand: Hand, t: float, reason: str) -> None:
    """The seat in turn checks (000 §3): confirmed by the dealer, or implied."""
    game = hand.game
    seat = game.actor
    assert seat is not None
    street, total = game.street, game.bet(seat)
    game.check_or_call()
    hand.actions.count += 1
    engine.emit(ActionTaken, t, seat=seat, action="check", street=street, total=total, added=0, rule="000 §3",
                reason=reason)


def close_round(engine: Table, hand: Hand, t: float) -> bool:
    """Imply the checks of a round nobody bet in (the street closes); False if someone faces a bet."""
    game = hand.game
    while (seat := game.actor) is not None:
        if not game.can_check(seat):
            return False
        check(engine, hand, t, "implied: the street closed")
    pots.settle(engine, t)
    return True


def out_of_turn(engine: Table, hand: Hand, seat: int, obs: Observation) -> None:
    """An action by a seat not in turn: imply the checks before it, or put it off until its turn."""
    game = hand.game
    while (actor := game.actor) is not None and actor != seat and game.can_check(actor):
        check(engine, hand, obs.t, f"implied: seat {seat} acted next")
    if game.actor == seat:
        return engine.route(obs)
    engine.postponed.add(obs, Until.TURN, seat)


def after_action(engine: Table, t: float) -> None:
    """Settle what follows an action; the next seat's action made out of turn is applied now."""
    pots.settle(engine, t)
    hand = engine.hand
    if hand is not None and engine.hold is None and engine.postponed:
        actor = hand.game.actor
        if actor is not None:
            engine.release(Until.TURN, actor)


def deal_incomplete(engine: Table, hand: Hand, obs: Observation) -> bool:
    """Play went on before every seat had two cards (000 §35A4, §37; 002 C.2; 003 art. 77).

    When the button alone lacks a card and may receive it, *obs* waits for the end of the deal.
    """
    if hand.dealt_all:            # the usual case, answered at once
        return False
    finding = checks.deal_incomplete(hand, engine.profile)
    if finding is None:
        return False
    if finding.kind == "button-short-a-card":
        waiting = engine.postponed.add(obs, Until.DEAL_END)
        if engine.hold is None and waiting == 1:
            engine.irregular(obs.t, finding)
        return True
    engine.irregular(obs.t, finding)
    return True
