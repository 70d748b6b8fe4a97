"""Cards: each card read in a zone is drawn, dealt, burned, opened on the board or mucked.

Handlers of the engine, through its :class:`~.table.Table` protocol. Where a card may come from is
:mod:`.card_path`'s to say; what went wrong is :mod:`.checks`'s.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from firmware_host.events import BoardDealt, CardBurned, HoleCardDealt
from firmware_host.observations import (
    CardEntered,
    CardExposed,
    CardLeft,
    ForeignCard,
    Observation,
    WrongBackCard,
    zone_seat,
)
from firmware_host.rules import actions, checks, pots
from firmware_host.rules.card_path import SPOTS, Place, place_of
from firmware_host.rules.game import GameError
from firmware_host.rules.hand import Hand
from firmware_host.rules.holds import Until

if TYPE_CHECKING:
    from firmware_host.rules.table import Table

BOARD_SIZES = {"flop": 3, "turn": 1, "river": 1}
_DUE = checks.DUE


def card_entered(engine: Table, obs: CardEntered) -> None:
    """A card read entering a zone: what it means depends on the zone."""
    hand = engine.hand
    if hand is None:
        if obs.zone not in ("shoe", "muck"):   # cards gathered into the muck after a hand
            engine.report(obs.t, "card-without-hand", f"{obs.card} read in {obs.zone} between hands",
                          cards=(obs.card,))
        return
    (_BY_ZONE.get(obs.zone) or _ENTERED[place_of(obs.zone)])(engine, hand, obs)


def card_left(engine: Table, obs: CardLeft) -> None:
    """A card leaving a zone decides nothing: where it arrives does."""


def foreign_card(engine: Table, obs: ForeignCard) -> None:
    engine.irregular(obs.t, checks.foreign_card(obs.uid, obs.zone))


def wrong_back_card(engine: Table, obs: WrongBackCard) -> None:
    engine.irregular(obs.t, checks.wrong_back_card(obs.card, obs.deck, obs.zone))


def card_exposed(engine: Table, obs: CardExposed) -> None:
    """A card face up in a seat's card area. The camera does not say which: during the deal it
    is the card the seat was dealt last (it landed face up, and was seen before the seat's next
    card, a round later); once the deal is over no card is named, the seat's cards being secret."""
    hand, seat = engine.hand, zone_seat(obs.zone)
    if hand is None or seat is None:
        return
    held = hand.cards.hole_cards(seat)
    card = obs.card if obs.card is not None else (held[-1] if held else None)
    if card is None or card not in held:
        return
    key = card if obs.card is not None or hand.game.expects_hole else obs.zone  # after the deal: per seat
    if key in hand.deal.seen_up:
        return  # a card already reported face up is not a second one
    hand.deal.seen_up.add(key)
    if hand.game.expects_hole:
        return engine.irregular(obs.t, checks.dealer_exposed(hand, engine.profile, seat, card))
    if seat in hand.game.in_hand and hand.game.actor is not None:  # at showdown cards are shown
        engine.irregular(obs.t, checks.shown_face_up(seat, obs.card))


def joins_hold(engine: Table, obs: Observation) -> bool:
    """A board card opened while premature cards hold the hand joins that incident: one ruling covers
    every card the dealer opened too early (003 art. 76, 000 §39, 002 C.3)."""
    hold, hand = engine.hold, engine.hand
    if hold is None or hand is None or hold.kind not in checks.PREMATURE or not isinstance(obs, CardEntered):
        return False
    place = place_of(obs.zone)
    if place not in (Place.SHOE, Place.BOARD) or not hand.cards.may_enter(obs.card, place):
        return False
    hand.cards.read(obs.card, obs.zone)          # drawn for the board, or opened on it
    if place is Place.BOARD:
        engine.hold = replace(hold, cards=(*hold.cards, obs.card))
    return True


# -- by zone -------------------------------------------------------------------------------------

def _drawn(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card drawn from the shoe."""
    if not hand.cards.may_enter(obs.card, Place.SHOE):
        return _seen_again(engine, hand, obs)
    hand.cards.read(obs.card, obs.zone)
    if obs.face_up and hand.game.expects_hole:
        finding = checks.face_up_in_deck(hand, obs.card)
        if finding is not None:
            engine.irregular(obs.t, finding)


def _to_seat(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card reached a seat: a hole card, or the replacement of an exposed one (002 C.2)."""
    seat = int(obs.zone.partition(":")[2])
    if not hand.cards.may_enter(obs.card, Place.SEAT) and hand.deal.replace.get(seat) != obs.card:
        return _seen_again(engine, hand, obs)
    game = hand.game
    if seat in hand.deal.replace:                     # 002 C.2: the replacement of an exposed card (a seat dealt in)
        old = hand.deal.replace.pop(seat)
        game.replace_hole_card(seat, old, obs.card)
        hand.cards.replace(old, obs.card, seat, obs.zone)
        return engine.emit(HoleCardDealt, obs.t, seat=seat, card=obs.card)
    finding = checks.hole_card(hand, engine.profile, seat, obs.card)
    if finding is not None:
        return engine.irregular(obs.t, finding)
    try:
        game.deal_hole(seat, obs.card)
    except GameError as exc:
        return engine.report(obs.t, "hole-card-refused", f"{obs.card} to seat {seat}: {exc}", seats=(seat,),
                             cards=(obs.card,))
    hand.deal.dealt += 1
    hand.cards.deal(obs.card, seat, obs.zone)
    engine.emit(HoleCardDealt, obs.t, seat=seat, card=obs.card)
    if obs.face_up:
        engine.irregular(obs.t, checks.dealer_exposed(hand, engine.profile, seat, obs.card))
    pots.settle(engine, obs.t)
    if hand.dealt_all and engine.hold is None:      # the end of the deal
        engine.release(Until.DEAL_END)


def _burned(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card on the burn spot: the street's burn, or one burned early, kept for the next street.

    A burn before the betting ends exposes nothing: it burns the next street. A card the floor's
    ruling burned, or put out of play, reaching the burn spot is the dealer carrying it out.
    """
    card, board = obs.card, hand.board
    spot = hand.cards.where(card)
    if card in board.burned_elsewhere or (spot is not None and spot.place is Place.DEAD):
        board.burned_elsewhere.discard(card)      # 003 art. 76: already counted; a dead card joins the burn pile
        return
    if not hand.cards.may_enter(card, Place.BURN):
        return _seen_again(engine, hand, obs)
    held = hand.cards.held_for_burn()
    if held and card not in held:
        hand.cards.to_stub(card)       # 000 §39: the ruling's card is the burn; this one is the street's card
        return engine.irregular(obs.t, checks.burn_not_held(card, held))
    game = hand.game
    if actions.deal_incomplete(engine, hand, obs):
        return
    round_open = game.actor is not None and not actions.close_round(engine, hand, obs.t)
    if board.burn_ready is not None or not (round_open or game.expects_burn):
        hand.cards.to_stub(card)       # 002 C.3: the card goes back on the stub, the next street's burn
        return engine.irregular(obs.t, checks.extra_burn(card))
    hand.cards.read(card, obs.zone)
    board.burn_ready = card
    if not round_open:
        _burn_ready(engine, hand, obs.t)


def _burn_ready(engine: Table, hand: Hand, t: float) -> None:
    """Burn the card on the burn spot for the street due."""
    game, card = hand.game, hand.board.burn_ready
    hand.board.burn_ready = None
    street = _DUE[len(game.board)]
    game.burn(card)
    engine.emit(CardBurned, t, street=street, card=card)


def _to_board(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card on a board spot: with the others of its street, the street is dealt."""
    if not hand.cards.may_enter(obs.card, Place.BOARD):
        return _seen_again(engine, hand, obs)
    street = obs.zone.partition(":")[2]
    game = hand.game
    if actions.deal_incomplete(engine, hand, obs):
        return
    finding = checks.four_card_flop(hand, street, obs.card)
    if finding is not None:
        hand.cards.read(obs.card, obs.zone)
        return engine.irregular(obs.t, finding)
    if game.actor is not None and not actions.close_round(engine, hand, obs.t):
        return engine.irregular(obs.t, checks.premature(hand, engine.profile, obs))
    due = _DUE.get(len(game.board))
    if street != due or not (game.expects_burn or game.board_count_expected):
        where = f"the {due} is due" if due else "the board is complete"
        return engine.report(obs.t, "card-to-wrong-board-spot", f"{obs.card} read on the {street} spot, but {where}: "
                             "the dealer puts it where it belongs", cards=(obs.card,))
    if game.expects_burn and hand.board.burn_ready is not None:      # burned before the betting ended
        _burn_ready(engine, hand, obs.t)
    elif game.expects_burn:
        finding = checks.missed_burn(street, obs.card, engine.profile)
        engine.irregular(obs.t, finding)
        if finding.variant == "art-76":          # 003 art. 76: the card opened unburnt becomes the burn card
            game.burn(obs.card)
            hand.cards.read(obs.card, Place.BURN.value)
            hand.board.burned_elsewhere.add(obs.card)       # the dealer moves it to the burn spot
            return engine.emit(CardBurned, obs.t, street=street, card=obs.card)
        game.burn(None)
    waiting = hand.board.waiting
    waiting.append(obs.card)
    hand.cards.read(obs.card, obs.zone)
    if len(waiting) < BOARD_SIZES[street]:
        return
    cards, hand.board.waiting = tuple(waiting), []
    try:
        game.deal_board(cards)
    except GameError as exc:
        return engine.report(obs.t, "board-refused", str(exc), cards=cards)
    if street == "flop":
        hand.board.flop_actions = hand.actions.count
    engine.emit(BoardDealt, obs.t, street=street, cards=cards)
    pots.settle(engine, obs.t)


def _mucked(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card in the muck: a live hand's card folds it, or mucks it at showdown."""
    game = hand.game
    seat = hand.cards.owner(obs.card)
    if seat is None or seat not in game.in_hand:
        return hand.cards.read(obs.card, obs.zone)
    if actions.deal_incomplete(engine, hand, obs):
        return
    hand.cards.read(obs.card, obs.zone)
    if game.showdown_seat is not None:
        hand.mucked.add(seat)
        while (showing := game.showdown_seat) is not None and showing in hand.mucked:
            pots.show(engine, showing, False, obs.t)
        return pots.settle(engine, obs.t)
    if seat != game.actor:
        return actions.out_of_turn(engine, hand, seat, obs)
    actions.fold(engine, hand, seat, obs)


def _seen_again(engine: Table, hand: Hand, obs: CardEntered) -> None:
    """A card read where it cannot come from: a hole card elsewhere is exposed, else a duplicate."""
    where = hand.cards.where(obs.card)
    assert where is not None                            # a card never seen may enter anywhere
    seat = hand.cards.owner(obs.card)
    if seat is None or where.place is not Place.SEAT or obs.zone == where.zone or obs.zone == "shoe":
        return engine.irregular(obs.t, checks.duplicate(obs.card, obs.zone, where))
    if hand.game.expects_hole:
        return engine.irregular(obs.t, checks.dealer_exposed(hand, engine.profile, seat, obs.card))
    if seat in hand.game.in_hand:
        engine.irregular(obs.t, checks.read_elsewhere(seat, obs.card, obs.zone))


_ENTERED: dict[Place, Callable[[Table, Hand, CardEntered], None]] = {
    Place.SHOE: _drawn,
    Place.SEAT: _to_seat,
    Place.BURN: _burned,
    Place.BOARD: _to_board,
    Place.MUCK: _mucked,
}
"""What a card read in each zone's place means."""

_BY_ZONE = {zone: _ENTERED[spot.place] for zone, spot in SPOTS.items() if spot.place in _ENTERED}
"""The same, looked up by zone at once (every card read takes this path)."""
