"""Where each card of the hand is: the last zone it was read in, or out of the hand.

A card read in a zone is in that zone's :class:`Place`; the floor's rulings put a
card in two more: ``HELD_BURN`` (taken back, to be burned later: 002 C.2, 000 §39)
and ``DEAD`` (out of play: 002 C.3). :data:`ENTERS_FROM` says from where a card may
arrive in each place; anything else is a card seen twice.

>>> path = CardPath()
>>> path.may_enter("As", Place.SEAT)
True
>>> path.read("As", "seat:3")
>>> str(path.where("As")), path.may_enter("As", Place.BOARD)
('seat:3', False)
>>> path.hold_for_burn("As")
>>> path.may_enter("As", Place.BURN), path.may_enter("As", Place.SEAT)
(True, False)
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Place(enum.Enum):
    """Where a card of the hand is."""

    SHOE = "shoe"              # drawn from the shoe
    SEAT = "seat"              # in a seat's card area: a hole card
    BOARD = "board"            # on a board spot
    BURN = "burn"
    MUCK = "muck"
    HELD_BURN = "held-burn"    # taken back, to be the burn card of a later street (002 C.2, 000 §39)
    DEAD = "dead"              # out of play (002 C.3)

    __hash__ = object.__hash__  # members are singletons: hashed by identity, in C (the engine's hot path)


_OF_KIND = {place.value: place for place in Place}

ENTERS_FROM: dict[Place, frozenset[Place | None]] = {
    Place.SHOE: frozenset({None, Place.HELD_BURN}),
    Place.BURN: frozenset({None, Place.SHOE, Place.HELD_BURN}),
    Place.SEAT: frozenset({None, Place.SHOE}),
    Place.BOARD: frozenset({None, Place.SHOE}),
    Place.MUCK: frozenset({None, *Place}),        # the muck takes any card: what it means is the engine's
}
"""From where (None: the stub, never seen) a card may be read in each zone's place."""


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a card is: its place, and the zone it was read in (the place's name when out of the hand)."""

    place: Place
    zone: str

    def __str__(self) -> str:
        return self.zone


SPOTS = {zone: Spot(_OF_KIND[zone.partition(":")[0]], zone)
         for zone in ("shoe", "burn", "muck", "held-burn", "dead", "board:flop", "board:turn", "board:river",
                      *(f"seat:{n}" for n in range(100)))}
"""The spot of each zone (and of the places out of the hand), made once: a card is read several times a hand."""


def spot_of(zone: str) -> Spot:
    """The spot of a card read in *zone* (``'seat:3'``), or of a place out of the hand (``'dead'``)."""
    found = SPOTS.get(zone)
    return found if found is not None else Spot(_OF_KIND[zone.partition(":")[0]], zone)


def place_of(zone: str) -> Place:
    """The place of a zone: ``'seat:3'`` -> ``Place.SEAT``."""
    return spot_of(zone).place


class CardPath:
    """Where each card seen this hand is, and the hole cards' seats in the order they were dealt."""

    def __init__(self) -> None:
        self._spots: dict[str, Spot] = {}
        self._owners: dict[str, int] = {}      # hole card -> seat, in the order dealt

    def where(self, card: str) -> Spot | None:
        """Where *card* is; None while it is in the stub."""
        return self._spots.get(card)

    def may_enter(self, card: str, place: Place) -> bool:
        """May *card* be read in *place*, coming from where it is?"""
        spot = self._spots.get(card)
        return spot is None or spot.place in ENTERS_FROM[place]

    def read(self, card: str, zone: str) -> None:
        """*card* was read in *zone*."""
        self._spots[card] = SPOTS.get(zone) or spot_of(zone)

    def hold_for_burn(self, card: str) -> None:
        """*card* is taken back, to be burned later (002 C.2, 000 §39)."""
        self._spots[card] = SPOTS[Place.HELD_BURN.value]

    def held_for_burn(self) -> tuple[str, ...]:
        """The cards a ruling took back to be burned, not yet on the burn spot."""
        return tuple(c for c, spot in self._spots.items() if spot.place is Place.HELD_BURN)

    def kill(self, card: str) -> None:
        """*card* is out of play (002 C.3)."""
        self._spots[card] = SPOTS[Place.DEAD.value]

    def to_stub(self, card: str) -> None:
        """*card* is back in the stub, as if never seen (000 §39, 002 C.3)."""
        self._spots.pop(card, None)

    # -- hole cards ----------------------------------------------------------
    def deal(self, card: str, seat: int, zone: str) -> None:
        """*card* is dealt to *seat*, read in *zone*."""
        self._spots[card] = SPOTS.get(zone) or spot_of(zone)
        self._owners[card] = seat

    def replace(self, old: str, new: str, seat: int, zone: str) -> None:
        """*new* replaces the exposed *old* in *seat*'s hand; *old* will be burned (002 C.2)."""
        self.hold_for_burn(old)
        del self._owners[old]
        self.deal(new, seat, zone)

    def owner(self, card: str) -> int | None:
        """The seat *card* was dealt to, or None if it is no hole card."""
        return self._owners.get(card)

    def hole_cards(self, seat: int) -> list[str]:
        """*seat*'s hole cards, in the order dealt."""
        return [card for card, owner in self._owners.items() if owner == seat]

    def dealt_among_first(self, card: str, count: int) -> bool:
        """Is hole card *card* one of the first *count* cards of the deal (000 §35A5)?"""
        return list(self._owners).index(card) < count
