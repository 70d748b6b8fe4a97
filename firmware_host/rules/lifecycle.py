"""The hand's life: the table between hands, the start of a hand, the dealer's presses.

Handlers of the engine, through its :class:`~.table.Table` protocol: each takes the engine and one
observation (or a press's time) and reports through it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from firmware_host.events import HandStarted
from firmware_host.observations import MoveButton, SeatPresence, SetLevel
from firmware_host.rules import actions, pots, seating
from firmware_host.rules.chips import odd_chip_divmod
from firmware_host.rules.game import Game
from firmware_host.rules.hand import Hand
from firmware_host.rules.lineup import Player
from firmware_host.rules.profile import Level

if TYPE_CHECKING:
    from firmware_host.rules.table import Table


# -- between hands -------------------------------------------------------------------------------

def seat_presence(engine: Table, obs: SeatPresence) -> None:
    """A player sits down or leaves."""
    hand, lineup = engine.hand, engine.lineup
    if not 1 <= obs.seat <= engine.profile.seats:
        return engine.report(obs.t, "unknown-seat", f"seat {obs.seat} does not exist at a "
                             f"{engine.profile.seats}-seat table", seats=(obs.seat,))
    if obs.present:
        if hand is not None and obs.seat in hand.game.order:
            return engine.report(obs.t, "seat-change-during-hand",
                                 f"seat {obs.seat} is in the hand; seat the player after it", seats=(obs.seat,))
        assert obs.stack is not None        # SeatPresence checks it
        lineup.players[obs.seat] = Player(obs.player, obs.stack, new=lineup.previous is not None)
    elif hand is not None and obs.seat in hand.game.in_hand:
        engine.report(obs.t, "player-left", f"seat {obs.seat} left the table with a live hand: "
                      "the hand is dead, chips already in the pot are lost", seats=(obs.seat,))
    else:
        lineup.players.pop(obs.seat, None)


def set_level(engine: Table, obs: SetLevel) -> None:
    """The TD's new level starts with the next hand, never the one in progress (000 §23)."""
    number = obs.number if obs.number is not None else engine.level.number + 1
    engine.lineup.next_level = Level(number=number, small_blind=obs.small_blind, big_blind=obs.big_blind,
                                     ante=obs.ante, big_blind_ante=obs.big_blind_ante,
                                     minutes=engine.level.minutes)


def move_button(engine: Table, obs: MoveButton) -> None:
    """The TD places the button, between hands."""
    if engine.hand is not None:
        return engine.report(obs.t, "button-move-during-hand", "move the button between hands", seats=(obs.seat,))
    if obs.seat not in engine.lineup.players:
        return engine.report(obs.t, "button-on-empty-seat", f"seat {obs.seat} has no player", seats=(obs.seat,))
    engine.lineup.button = obs.seat
    engine.lineup.previous = None


# -- the dealer's presses ------------------------------------------------------------------------

def new_hand(engine: Table, t: float) -> None:
    """Start a hand: positions, level, blinds posted."""
    lineup = engine.lineup
    if engine.hand is not None:
        return engine.report(t, "hand-in-progress", f"hand {engine.hand_number} is not over")
    try:
        positions = lineup.positions(engine.profile)
    except seating.SeatingError as exc:
        return engine.report(t, "cannot-start-hand", str(exc))
    if positions is None:
        return engine.report(t, "no-button", "place the button (draw for the button) first")
    replay = lineup.replay
    if not replay and lineup.next_level is not None:
        engine.level, lineup.next_level = lineup.next_level, None  # 000 §23
    level = engine.level
    starting = {s: lineup.players[s].stack for s in positions.dealt_in}
    game = Game(positions.dealt_in, starting, small_blind=level.small_blind, big_blind=level.big_blind,
                has_small_blind=positions.small_blind is not None, ante=level.ante,
                big_blind_ante=level.big_blind_ante,
                divmod=odd_chip_divmod(engine.unit, engine.profile.odd_chip == "left-of-button"))
    engine.hand_number += 1
    lineup.replay = False
    lineup.button = None
    lineup.previous = positions
    for seat in positions.dealt_in:
        lineup.players[seat].new = False
    hand = engine.hand = Hand(game, starting)
    hand.bets.amount = {s: game.bet(s) for s in positions.dealt_in}  # the blinds' chips: unknown until counted
    engine.emit(HandStarted, t, button=positions.button, small_blind_seat=positions.small_blind,
                big_blind_seat=positions.big_blind, small_blind=level.small_blind,
                big_blind=level.big_blind, ante=level.ante, big_blind_ante=level.big_blind_ante,
                seats=positions.dealt_in, stacks=tuple(starting[s] for s in positions.dealt_in),
                posted=tuple(starting[s] - game.stack(s) for s in positions.dealt_in),
                waiting=positions.waiting, replay=replay, rules=positions.rules)


def misdeal(engine: Table, t: float) -> None:
    """The dealer declares a misdeal: refused after substantial action (000 §35D), else replayed (000 §35C)."""
    if engine.hand is None:
        return engine.report(t, "no-hand", "no hand to declare a misdeal on")
    if engine.substantial_action:
        return engine.report(t, "misdeal-after-substantial-action",
                             "substantial action has occurred: no misdeal, the hand continues")
    engine.report(t, "misdeal", "all cards back, same button, same blinds: the hand is replayed")
    engine.end_hand(t, voided=True)


def floor(engine: Table, t: float) -> None:
    """The dealer calls the floor."""
    engine.report(t, "floor-called", "the dealer called the floor", seats=(engine.actor,) if engine.actor else ())


def confirm(engine: Table, t: float) -> None:
    """The dealer confirms: the seat in turn checks (000 §3), or the showdown goes on."""
    hand = engine.hand
    if hand is None:
        return engine.report(t, "no-hand", "confirm pressed with no hand in progress")
    game = hand.game
    seat = game.actor
    if seat is not None:
        if not game.can_check(seat):
            return engine.report(t, "confirm-facing-bet", f"seat {seat} faces a bet: chips in the zone to call or "
                                 "raise, cards to the muck to fold", seats=(seat,))
        actions.check(engine, hand, t, "confirmed by the dealer")
    elif game.showdown_seat is not None:
        while (showing := game.showdown_seat) is not None:
            pots.show(engine, showing, showing not in hand.mucked, t)
    else:
        return engine.report(t, "nothing-to-confirm", f"the table waits for {hand.waiting_for()}")
    pots.settle(engine, t)
