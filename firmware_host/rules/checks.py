"""Irregularity checks: what the observations show went wrong, as a :class:`Finding`.

Each check looks at the hand and one observation's facts and returns a finding
(or None when all is well); :mod:`.irregularities` says which rule of the house
applies and what to do, and the engine reports it. The counters a check keeps
(cards face up, cards exposed) are the hand's :class:`~.hand.Deal`.
"""
from __future__ import annotations

from dataclasses import dataclass

from firmware_host.observations import CardEntered
from firmware_host.rules.card_path import Spot
from firmware_host.rules.hand import Hand
from firmware_host.rules.profile import Profile


@dataclass(frozen=True)
class Finding:
    """An irregularity seen: its kind in the catalogue, what was seen, the seats and cards concerned.

    *variant* is the profile setting that chooses the procedure, where one does.
    """

    kind: str
    detail: str
    seats: tuple[int, ...] = ()
    cards: tuple[str, ...] = ()
    variant: str | None = None


# -- the deck ------------------------------------------------------------------------------------

def duplicate(card: str, zone: str, where: Spot) -> Finding:
    """A card read twice: two decks mixed, or a card of the stub seen again (000 §35E, 002 C.3)."""
    return Finding("duplicate-card", f"{card} read in {zone} but already in {where}", cards=(card,))


def face_up_in_deck(hand: Hand, card: str) -> Finding | None:
    """Count a card drawn face up during the deal: the second is a misdeal (000 §35A1)."""
    hand.deal.face_up_in_deck += 1
    if hand.deal.face_up_in_deck != 2:
        return None
    return Finding("cards-face-up-in-deck", f"{card} is the second card face up in the deck", cards=(card,))


def foreign_card(uid: str, zone: str) -> Finding:
    """A tag of no registered deck (000 §35E, 002 C.3)."""
    return Finding("foreign-card", f"tag {uid} read in {zone} is in no registered deck")


def wrong_back_card(card: str, deck: str, zone: str) -> Finding:
    """A card of the table's other deck (002 C.1, C.3)."""
    return Finding("wrong-back-card", f"{card} of deck {deck} (the other back) read in {zone}", cards=(card,))


# -- the deal ------------------------------------------------------------------------------------

def hole_card(hand: Hand, profile: Profile, seat: int, card: str) -> Finding | None:
    """A card to a seat not dealt in (000 §35A3), the first card not left of the button (000 §35A2),
    or a third card to a seat (000 §35A4): after substantial action, that hand is dead (000 §38,
    003 art. 78)."""
    game = hand.game
    if seat not in game.order:
        return Finding("card-to-seat-not-dealt-in", f"{card} went to seat {seat}, which is not dealt in",
                       seats=(seat,), cards=(card,))
    if hand.deal.dealt == 0 and seat != game.order[0]:
        return Finding("first-card-wrong-seat", f"the first card went to seat {seat}, not seat {game.order[0]} "
                       "left of the button", seats=(seat,), cards=(card,))
    if not game.expects_hole or len(game.hole(seat)) >= 2:
        if seat in game.in_hand and hand.actions.substantial(profile.substantial_action):
            return Finding("extra-card-dead-hand", f"{card} is a third card for seat {seat} after substantial "
                           "action", seats=(seat,), cards=(*game.hole(seat), card))
        return Finding("wrong-number-of-cards", f"{card} is a third card for seat {seat}", seats=(seat,),
                       cards=(card,))
    return None


def deal_incomplete(hand: Hand, profile: Profile) -> Finding | None:
    """Play went on before every seat had two cards: 000 §35A4, §37; 002 C.2; 003 art. 77.

    ``button-short-a-card`` when the button alone lacks its second card and the house lets
    it receive it (the observation waits for the end of the deal).
    """
    game = hand.game
    if hand.dealt_all or not game.expects_hole:
        return None
    short = tuple(s for s in game.order if len(game.hole(s)) < 2)
    button = game.order[-1]
    if (short == (button,) and len(game.hole(button)) == 1
            and profile.irregularities.button_missing_card == "may-receive"):
        return Finding("button-short-a-card", f"the button, seat {button}, has one card", seats=short)
    return Finding("wrong-number-of-cards", f"the deal ended with seat(s) {', '.join(map(str, short))} short "
                   "of cards", seats=short)


def dealer_exposed(hand: Hand, profile: Profile, seat: int, card: str) -> Finding:
    """A hole card exposed by the dealer during the deal (000 §35A5, 002 C.2, 004 H.a): counted."""
    deal = hand.deal
    deal.exposed += 1
    first_two = hand.cards.where(card) is not None and hand.cards.dealt_among_first(card, 2)
    if deal.exposed > 1 or first_two or profile.irregularities.exposed_card == "misdeal":
        why = "one of the first two cards" if first_two else ("a second card" if deal.exposed > 1 else "a card")
        return Finding("exposed-card-misdeal", f"{why} ({card}) exposed by the dealer to seat {seat}",
                       seats=(seat,), cards=(card,))
    return Finding("exposed-card-replaced", f"{card} exposed by the dealer to seat {seat}", seats=(seat,),
                   cards=(card,))


def shown_face_up(seat: int, card: str | None) -> Finding:
    """A card of a live hand face up while the action is open (000 §68, 001, 002 C.6, 003 art. 48, 004 H.b).

    *card* is None when the camera saw it: it does not say which card, and none is published.
    """
    what = card if card is not None else "a card face up (camera)"
    return Finding("player-exposed-cards", f"seat {seat} shows {what} while the action is open", seats=(seat,),
                   cards=(card,) if card is not None else ())


def read_elsewhere(seat: int, card: str, zone: str) -> Finding:
    """A live hole card read in another zone once the deal is over: the player exposed it (000 §68...)."""
    return Finding("player-exposed-cards", f"seat {seat}'s {card} read in {zone}", seats=(seat,), cards=(card,))


# -- the board -----------------------------------------------------------------------------------

DUE = {0: "flop", 3: "turn", 4: "river"}
"""Board cards dealt -> the street due."""


def premature(hand: Hand, profile: Profile, obs: CardEntered) -> Finding:
    """A board card while the betting round is open (003 art. 76, TDA RP-5, 002 C.3).

    003 art. 76 has one procedure per street: its variant is ``art-76`` (the flop),
    ``art-76-turn`` or ``art-76-river``.
    """
    game = hand.game
    variant: str = profile.irregularities.premature_card
    before_action = game.street == "preflop" and hand.actions.count == 0
    if before_action and variant == "art-76" and hand.actions.substantial(profile.substantial_action):
        before_action = False
    street = DUE.get(len(game.board), "river")
    if variant == "art-76" and street != "flop":
        variant = f"art-76-{street}"
    actor = game.actor
    return Finding("premature-flop-before-action" if before_action else "premature-card",
                   f"{obs.card} read in {obs.zone} while seat {actor} still has to act",
                   seats=(actor,) if actor is not None else (), cards=(obs.card,), variant=variant)


PREMATURE = frozenset({"premature-card", "premature-flop-before-action"})
"""Kinds held for premature board cards: the other cards the dealer opens meanwhile join the incident."""


def four_card_flop(hand: Hand, street: str, card: str) -> Finding | None:
    """A fourth card on the flop before any action on it (000 §39)."""
    if street != "flop" or hand.board.flop_actions != hand.actions.count or hand.board.waiting:
        return None
    board = hand.game.board
    if len(board) != 3:
        return None
    return Finding("four-card-flop", f"a fourth card {card} reached the flop", cards=(*board, card))


def missed_burn(street: str, card: str, profile: Profile) -> Finding:
    """A street opened without a burn card (003 art. 76, 002 C.3)."""
    return Finding("missed-burn", f"the {street} came without a burn card", cards=(card,),
                   variant=profile.irregularities.missed_burn)


def extra_burn(card: str) -> Finding:
    """A burn card when none is due (002 C.3)."""
    return Finding("extra-burn", f"{card} burned when no burn is due", cards=(card,))


def burn_not_held(card: str, held: tuple[str, ...]) -> Finding:
    """A fresh burn while a ruling's card waits to be this street's burn (000 §39, 002 C.2)."""
    return Finding("extra-burn", f"{card} burned, but {' '.join(held)} is the burn card the ruling kept",
                   cards=(card, *held), variant="held")
