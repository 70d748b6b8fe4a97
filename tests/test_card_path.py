"""Where each card is: the places, the moves allowed between them, and the hole cards' seats."""
import pytest

from firmware_host.rules.card_path import ENTERS_FROM, CardPath, Place, Spot, place_of

ZONE_PLACES = {"shoe": Place.SHOE, "seat:3": Place.SEAT, "seat:10": Place.SEAT, "board:flop": Place.BOARD,
               "board:river": Place.BOARD, "burn": Place.BURN, "muck": Place.MUCK}


@pytest.mark.parametrize("zone, place", ZONE_PLACES.items())
def test_every_zone_has_its_place(zone, place):
    assert place_of(zone) is place


def test_every_place_a_card_can_be_read_in_says_where_it_may_come_from():
    read_in = {place_of(zone) for zone in ZONE_PLACES}
    assert set(ENTERS_FROM) == read_in
    assert Place.HELD_BURN not in ENTERS_FROM and Place.DEAD not in ENTERS_FROM   # the floor's, never read


# (from, to): may a card where it is be read in a zone of the place *to*? None: in the stub.
MOVES = [
    (None, Place.SHOE, True), (None, Place.SEAT, True), (None, Place.BOARD, True), (None, Place.BURN, True),
    (Place.SHOE, Place.SEAT, True), (Place.SHOE, Place.BOARD, True), (Place.SHOE, Place.BURN, True),
    (Place.SHOE, Place.SHOE, False),                # drawn twice: two decks mixed
    (Place.SEAT, Place.SEAT, False), (Place.SEAT, Place.BOARD, False), (Place.BOARD, Place.BURN, False),
    (Place.BURN, Place.SHOE, False), (Place.MUCK, Place.SEAT, False),
    (Place.HELD_BURN, Place.SHOE, True),            # taken back, drawn again to be burned (002 C.2, 000 §39)
    (Place.HELD_BURN, Place.BURN, True),
    (Place.HELD_BURN, Place.SEAT, False), (Place.HELD_BURN, Place.BOARD, False),
    (Place.DEAD, Place.SHOE, False), (Place.DEAD, Place.BOARD, False),   # out of play (002 C.3)
    (Place.SEAT, Place.MUCK, True), (Place.DEAD, Place.MUCK, True),      # the muck takes anything
]


def _put(path: CardPath, card: str, place: Place | None) -> None:
    if place is Place.HELD_BURN:
        path.hold_for_burn(card)
    elif place is Place.DEAD:
        path.kill(card)
    elif place is not None:
        path.read(card, {Place.SEAT: "seat:2", Place.BOARD: "board:flop"}.get(place, place.value))


@pytest.mark.parametrize("origin, place, allowed", MOVES)
def test_card_place_transitions(origin, place, allowed):
    path = CardPath()
    _put(path, "Kd", origin)
    assert path.may_enter("Kd", place) is allowed


def test_a_spot_reads_as_its_zone():
    path = CardPath()
    path.read("As", "board:turn")
    assert path.where("As") == Spot(Place.BOARD, "board:turn") and str(path.where("As")) == "board:turn"
    path.hold_for_burn("As")
    assert str(path.where("As")) == "held-burn"
    path.kill("As")
    assert str(path.where("As")) == "dead"
    path.to_stub("As")
    assert path.where("As") is None


def test_hole_cards_keep_their_seat_and_the_order_dealt():
    path = CardPath()
    for card, seat in (("As", 1), ("Ks", 2), ("Ad", 1), ("Kd", 2)):
        path.deal(card, seat, f"seat:{seat}")
    assert path.hole_cards(1) == ["As", "Ad"] and path.owner("Ks") == 2 and path.owner("2c") is None
    assert path.dealt_among_first("Ks", 2) and not path.dealt_among_first("Ad", 2)
    path.replace("Kd", "2h", 2, "seat:2")                 # 002 C.2: the exposed card is replaced
    assert path.hole_cards(2) == ["Ks", "2h"] and path.owner("Kd") is None
    assert path.where("Kd").place is Place.HELD_BURN and path.where("2h") == Spot(Place.SEAT, "seat:2")
