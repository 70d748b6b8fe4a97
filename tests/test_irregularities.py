"""Each irregularity: triggered at the table, the rule of each house, the procedure, the state after resolution."""
from pathlib import Path

import pytest

from firmware_host import events as ev
from firmware_host.observations import (
    CardEntered,
    CardExposed,
    ForeignCard,
    Resolution,
    WrongBackCard,
)
from table import Table


def started(table):
    return [e for e in table.events if isinstance(e, ev.HandStarted)]


def resolved(table):
    return [e for e in table.events if isinstance(e, ev.IrregularityResolved)]


def notices(table):
    return [e for e in table.events if isinstance(e, ev.Notice)]


def three_handed(profile="000", **kw):
    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3, profile=profile, **kw)
    table.new_hand()
    return table


def card(table, zone, c, face_up=None):
    return table.feed(CardEntered(table.tick(), zone, c, face_up))


def assert_void_and_replay(table, first):
    ended = table.ended()
    assert ended.voided and set(ended.stacks) == {10000}       # every bet returned
    replay = table.new_hand()[-1]
    assert replay.replay and (replay.button, replay.small_blind_seat, replay.big_blind_seat) == (
        first.button, first.small_blind_seat, first.big_blind_seat)


# -- deck integrity: 000 §35E, 002 C.3 -----------------------------------------------------------

@pytest.mark.parametrize("profile, rule", [("000", "000 §35E"), ("002", "002 C.3"),
                                           ("003", "000 §35E (house 003 is silent)")])
@pytest.mark.parametrize("kind", ["duplicate-card", "foreign-card", "wrong-back-card"])
def test_deck_integrity_stops_play_and_returns_every_bet(profile, rule, kind):
    table = three_handed(profile)
    first = started(table)[-1]
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100, 100, 100), table.push(1, 100, 100, 50), table.push(2, 100, 100)   # substantial action
    assert table.engine.substantial_action
    if kind == "duplicate-card":
        card(table, "shoe", "Ks")
    elif kind == "foreign-card":
        table.feed(ForeignCard(table.tick(), "shoe", "04a1b2c3d4e5f6"))
    else:
        table.feed(WrongBackCard(table.tick(), "shoe", "2c", "red-deck"))
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor, irr.options) == (kind, rule, True, ("void-hand",))
    assert irr.substantial_action and "every bet is returned" in irr.procedure
    assert "jetons sont rendus" in irr.procedure_fr
    table.feed(Resolution(table.tick(), "td", "void-hand"))
    (done,) = resolved(table)
    assert (done.by, done.decision) == ("td", "void-hand")
    assert_void_and_replay(table, first)


# -- misdeals before substantial action: 000 §35, 002 C.2, 003 art. 77 --------------------------

@pytest.mark.parametrize("profile, rule", [("000", "000 §35A2"), ("002", "002 C.2")])
def test_first_card_to_the_wrong_seat_is_a_misdeal(profile, rule):
    table = three_handed(profile)
    first = started(table)[-1]
    card(table, "shoe", "As")
    card(table, "seat:2", "As")           # seat 1 is first left of the button
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.options) == ("first-card-wrong-seat", rule, ("misdeal",))
    card(table, "seat:3", "Kd")           # held, not lost, not dealt
    assert not [e for e in table.events if isinstance(e, ev.HoleCardDealt)]
    table.confirm()                       # the dealer applies the procedure
    assert resolved(table)[0].by == "dealer" and resolved(table)[0].decision == "misdeal"
    assert_void_and_replay(table, first)


def test_card_to_a_seat_not_dealt_in_is_a_misdeal_000_35a3():
    table = three_handed()
    card(table, "seat:1", "As")
    card(table, "seat:7", "Kd")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats) == ("card-to-seat-not-dealt-in", "000 §35A3", (7,))


@pytest.mark.parametrize("profile, rule", [("000", "000 §35A1"), ("003", "003 art. 77"), ("002", "002 C.2")])
def test_two_cards_face_up_in_the_deck_is_a_misdeal(profile, rule):
    table = three_handed(profile)
    card(table, "shoe", "As", face_up=True)
    card(table, "seat:1", "As")
    assert not table.irregularities()      # one card face up: no misdeal yet
    card(table, "shoe", "Kd", face_up=True)
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule) == ("cards-face-up-in-deck", rule)


@pytest.mark.parametrize("profile, kind, rule", [
    ("000", "button-short-a-card", "000 §37"), ("004", "button-short-a-card", "000 §37 (house 004 is silent)"),
    ("002", "wrong-number-of-cards", "002 C.2"), ("003", "wrong-number-of-cards", "003 art. 77")])
def test_button_one_card_short(profile, kind, rule):
    table = three_handed(profile)
    for c, seat in (("As", 1), ("Ks", 2), ("Qs", 3), ("Ad", 1), ("Kd", 2)):
        card(table, "shoe", c)
        card(table, f"seat:{seat}", c)
    table.push(3, 100)                     # play goes on: the button has one card
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats) == (kind, rule, (3,))
    if kind == "wrong-number-of-cards":
        assert irr.options == ("misdeal",)
        return
    assert irr.options == ("give-card", "misdeal")
    table.confirm()                        # 000 §37: the button receives its card
    assert table.actions() == []           # the push waits for the end of the deal
    card(table, "shoe", "Qd")
    card(table, "seat:3", "Qd")
    assert table.actions() == [(3, "call", 100)]


def test_entitled_seat_without_cards_is_a_misdeal_000_35a4():
    table = three_handed()
    for c, seat in (("As", 1), ("Ks", 2), ("Ad", 1), ("Kd", 2)):
        card(table, f"seat:{seat}", c)
    table.push(3, 100)
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats, irr.options) == (
        "wrong-number-of-cards", "000 §35A4", (3,), ("misdeal",))


def test_third_card_to_a_seat_is_a_misdeal():
    table = three_handed()
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    card(table, "seat:2", "2c")
    assert table.irregularities()[-1].irregularity == "wrong-number-of-cards"


@pytest.mark.parametrize("profile, rule", [("003", "003 art. 78"), ("000", "000 §38"),
                                           ("004", "000 §38 (house 004 is silent)")])
def test_a_third_card_after_substantial_action_kills_that_hand_out_of_turn(profile, rule):
    """003 art. 78: three cards or more, 'quelque soit le stade d'un coup': that hand is dead; 000 §38:
    after substantial action, all its cards are mucked and its chips stay in the pot."""
    table = _to_the_flop(profile)           # seat 3 called, seat 1 called, seat 2 checked: substantial
    table.push(1, 100)                      # seat 2 is to act
    card(table, "shoe", "4h")
    card(table, "seat:3", "4h")             # a card pitched to seat 3, out of turn
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats, irr.options) == (
        "extra-card-dead-hand", rule, (3,), ("dead-hand",))
    assert irr.cards == ("Qs", "Qd", "4h")
    table.confirm()
    assert table.engine.hand.game.in_hand == (1, 2) and table.engine.actor == 2
    table.push(2, 100)                      # the round closes without seat 3
    assert table.engine.actor is None and table.engine.hand.game.expects_burn
    assert table.engine.hand.game.stack(3) == 9900      # its chips stay in the pot


def test_a_dead_hand_that_leaves_one_live_hand_ends_it_003_art_78():
    table = three_handed("003")
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.fold(1)       # two actions: art. 77's misdeal no longer applies
    card(table, "shoe", "4h")
    card(table, "seat:3", "4h")             # seat 3's hand is dead: seat 2 is the last live hand
    table.confirm()
    (pot,) = [e for e in table.events if isinstance(e, ev.PotAwarded)]
    assert pot.winners == (2,) and table.ended().stacks == (9950, 10150, 9900)


# -- exposed cards ---------------------------------------------------------------------------------

@pytest.mark.parametrize("profile, rule", [("000", "000 §35A5"), ("002", "002 C.2"), ("004", "004 H.a")])
def test_one_of_the_first_two_cards_exposed_is_a_misdeal_everywhere(profile, rule):
    table = three_handed(profile)
    card(table, "seat:1", "As", face_up=True)
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.options) == ("exposed-card-misdeal", rule, ("misdeal",))


@pytest.mark.parametrize("profile, kind, rule", [
    ("000", "exposed-card-replaced", "000 §35A5: no misdeal (neither one of the first two cards nor two cards); "
                                     "the replacement is TDA practice, house 000 is silent on it"),
    ("001", "exposed-card-replaced", "000 §35A5: no misdeal; the replacement is TDA practice (house 001 is silent)"),
    ("002", "exposed-card-replaced", "002 C.2"),
    ("003", "exposed-card-misdeal", "003 art. 77"),
    ("004", "exposed-card-misdeal", "004 H.a"),
])
def test_a_single_later_exposed_card_is_replaced_where_the_house_says_so(profile, kind, rule):
    """Issue 13 item 3. 000 §35A5: a misdeal is "one of the first two cards dealt, or any two hole cards,
    exposed by dealer error"; a single later card is neither: replaced by the next card, dealt last, the
    exposed card the flop's burn (002 C.2 says so; for 000 and 001 it is the TDA's practice and the
    citation says the house is silent on it). 003 art. 77 and 004 H.a: a misdeal."""
    table = three_handed(profile)
    for c, seat in (("As", 1), ("Ks", 2), ("Qs", 3), ("Ad", 1)):
        card(table, f"seat:{seat}", c)
    card(table, "seat:2", "Kd", face_up=True)
    irr = table.irregularities()[-1]
    assert (irr.irregularity, irr.rule) == (kind, rule) and irr.procedure_fr
    if kind == "exposed-card-replaced":
        assert irr.options == ("replace",)
        table.confirm()
        card(table, "seat:3", "Qd")        # the deal goes on; seat 2 gets its replacement last
        card(table, "seat:2", "2h")
        assert table.engine.hand.game.hole(2) == ("Ks", "2h")
        table.holes = {1: ("As", "Ad"), 2: ("Ks", "2h"), 3: ("Qs", "Qd")}
        table.push(3, 100), table.push(1, 50), table.confirm()
        table.board("flop", "7c8c9c", burn="Kd")     # the exposed card is the flop's burn
        assert [e.card for e in table.events if isinstance(e, ev.CardBurned)] == ["Kd"]
        assert len(table.irregularities()) == 1


def test_hole_card_read_in_another_zone_is_exposed_not_a_duplicate():
    table = three_handed("002")
    for c, seat in (("As", 1), ("Ks", 2), ("Qs", 3)):
        card(table, f"seat:{seat}", c)
    card(table, "seat:2", "As")            # seat 1's first card slid under seat 2's antenna
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule) == ("exposed-card-misdeal", "002 C.2")   # one of the first two cards
    table2 = three_handed("000")
    table2.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    card(table2, "board:flop", "Qs")       # during the betting: seat 3's card on the board spot
    (irr,) = table2.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats) == ("player-exposed-cards", "000 §68", (3,))


@pytest.mark.parametrize("profile, rule", [("000", "000 §68"), ("004", "004 H.b"), ("003", "003 art. 48"),
                                           ("002", "002 C.6")])
def test_player_exposing_his_own_cards_is_reported_for_the_td_not_a_misdeal(profile, rule):
    table = three_handed(profile)
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.feed(CardExposed(table.tick(), "seat:3", "Qs"))
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor) == ("player-exposed-cards", rule, False)
    table.push(3, 100)
    assert table.actions() == [(3, "call", 100)]      # the hand goes on


# -- four-card flop: 000 §39 -----------------------------------------------------------------------

def _to_the_flop(profile="000"):
    table = three_handed(profile)
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.board("flop", "7c8c9c", burn="2d")
    return table


def test_four_card_flop_floor_picks_the_burn_at_random():
    table = _to_the_flop()
    card(table, "shoe", "Tc")
    card(table, "board:flop", "Tc")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.cards, irr.options) == (
        "four-card-flop", "000 §39", ("7c", "8c", "9c", "Tc"), ("random-burn",))
    table.feed(Resolution(table.tick(), "td", "random-burn", "8c"))
    (done,) = resolved(table)
    assert done.by == "td" and "8c is the turn's burn card" in done.effect
    assert table.engine.hand.game.board == ("7c", "Tc", "9c")
    table.confirm(), table.confirm()
    table.board("turn", "Jh", burn="8c")    # the chosen card is the turn's burn
    assert [e.cards for e in table.events if isinstance(e, ev.BoardDealt)][-1] == ("Jh",)
    assert len(table.irregularities()) == 1


def test_four_card_flop_a_fresh_burn_goes_back_the_pick_is_the_burn_000_39():
    table = _to_the_flop()
    card(table, "board:flop", "Tc")
    table.feed(Resolution(table.tick(), "td", "random-burn", "8c"))
    table.confirm(), table.confirm()
    card(table, "shoe", "3h")
    card(table, "burn", "3h")               # the dealer burns a fresh card: 8c already is the turn's burn
    irr = table.irregularities()[-1]
    assert (irr.irregularity, irr.rule, irr.cards) == ("extra-burn", "000 §39", ("3h", "8c"))
    assert "goes back on top of the stub" in irr.procedure and not irr.needs_floor
    table.board("turn", "3h", burn="8c")    # 3h back on the stub is the turn; the pick is burned
    assert [e.card for e in table.events if isinstance(e, ev.CardBurned)] == ["2d", "8c"]
    assert table.engine.hand.game.board == ("7c", "Tc", "9c", "3h")


def test_four_card_flop_dealer_confirm_picks_reproducibly():
    picks = set()
    for _ in range(2):
        table = _to_the_flop()
        card(table, "board:flop", "Tc")
        table.confirm()
        picks.add(resolved(table)[0].effect)
    assert len(picks) == 1                  # same observations, same pick


# -- premature board cards: 003 art. 76, TDA RP-5, 002 C.3 ----------------------------------------

@pytest.mark.parametrize("profile, kind, rule, option", [
    ("003", "premature-flop-before-action", "003 art. 76", "misdeal"),
    ("000", "premature-flop-before-action", "000 §39 (TDA RP-5)", "return-card"),
    ("002", "premature-flop-before-action", "002 C.3", "discard"),
])
def test_premature_flop_before_any_action(profile, kind, rule, option):
    table = three_handed(profile)
    first = started(table)[-1]
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    card(table, "board:flop", "7c")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.options) == (kind, rule, (option,))
    table.confirm()
    if option == "misdeal":
        return assert_void_and_replay(table, first)
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.sweep()
    card(table, "burn", "2d")
    card(table, "board:flop", "7c")        # the premature card comes again
    if option == "return-card":            # back in the stub: it may be dealt again
        assert len(table.irregularities()) == 1
    else:                                  # 002: out of play: seeing it again is a duplicate
        assert table.irregularities()[-1].irregularity == "duplicate-card"


def _burned(table):
    return [(e.street, e.card) for e in table.events if isinstance(e, ev.CardBurned)]


def test_premature_turn_003_art_76_each_step_as_written():
    """003 art. 76: 'On remet la carte brûlée sur le dessus du Talon, on brûle la carte ouverte, puis on
    prend la troisième carte à partir du bas du Talon, qui devient la carte du Turn.'"""
    table = _to_the_flop("003")
    table.push(1, 100)                      # seat 1 bets; seat 2 still to act
    card(table, "burn", "3h")               # burned early: nothing exposed, no irregularity
    assert table.irregularities() == []
    card(table, "shoe", "Jh")
    card(table, "board:turn", "Jh")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.options) == ("premature-card", "003 art. 76", ("burn-for-turn",))
    assert irr.seats == (2,) and "troisième carte à partir du bas du talon" in irr.procedure_fr
    table.confirm()
    (done,) = resolved(table)
    assert done.effect.startswith("3h back on top of the stub; Jh is the turn's burn card")
    card(table, "burn", "Jh")               # the dealer moves the opened card to the burn spot at once
    table.push(2, 100), table.push(3, 100)
    table.sweep()
    card(table, "shoe", "5s")
    card(table, "board:turn", "5s")         # the turn, without a new burn
    assert _burned(table)[-1] == ("turn", "Jh") and table.engine.hand.game.board[-1] == "5s"
    table.confirm(), table.confirm(), table.confirm()
    table.board("river", "4d", burn="3h")   # the burn card put back on the stub is the river's burn
    assert _burned(table)[-1] == ("river", "3h")
    assert len(table.irregularities()) == 1     # one incident, one confirmation


def test_premature_river_003_art_76_the_opened_card_is_out_and_the_river_burned_again():
    """003 art. 76: 'On remet la carte brûlée sur le dessus du Talon, on brûle la carte ouverte, une fois
    les enchères au Turn terminées, on brûle la première carte du Talon, on ouvre la suivante.'"""
    table = _to_the_flop("003")
    table.confirm(), table.confirm(), table.confirm()
    table.board("turn", "5s", burn="3h")
    table.push(1, 200)
    card(table, "burn", "6d")
    card(table, "board:river", "Kh")
    (irr,) = table.irregularities()
    assert (irr.rule, irr.options) == ("003 art. 76", ("burn-for-river",))
    table.confirm()
    card(table, "burn", "Kh")               # the opened card goes to the burn pile: out of play, no duplicate
    table.push(2, 200), table.push(3, 200)
    table.board("river", "2c", burn="6d")
    assert _burned(table)[-1] == ("river", "6d") and table.engine.hand.game.board == ("7c", "8c", "9c", "5s", "2c")
    assert len(table.irregularities()) == 1


def test_premature_flop_spread_is_one_incident_tda_rp5():
    """000 §39 (TDA RP-5): the three cards spread too early are one premature flop, one ruling."""
    table = three_handed("000")
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 300)
    card(table, "burn", "2d")
    for c in ("7c", "8c", "9c"):
        card(table, "shoe", c)
        card(table, "board:flop", c)
    (irr,) = table.irregularities()
    table.confirm()
    assert resolved(table)[0].cards == ("7c", "8c", "9c")
    table.push(1, 300), table.push(2, 200)
    table.sweep()
    for c in ("9c", "8c", "7c"):            # reshuffled into the stub: dealt again, without a new burn
        card(table, "shoe", c)
        card(table, "board:flop", c)
    assert _burned(table) == [("flop", "2d")] and len(table.irregularities()) == 1


# -- missed and extra burns: 003 art. 76, 002 C.3 -------------------------------------------------

def test_missed_burn_003_the_first_card_becomes_the_burn():
    table = three_handed("003")
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.sweep()
    for c in ("7c", "8c", "9c", "Tc"):
        card(table, "board:flop", c)
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor) == ("missed-burn", "003 art. 76", False)
    assert [e.card for e in table.events if isinstance(e, ev.CardBurned)] == ["7c"]
    assert table.engine.hand.game.board == ("8c", "9c", "Tc")


@pytest.mark.parametrize("street, before", [("turn", ("7c", "8c", "9c")), ("river", ("7c", "8c", "9c", "5s"))])
def test_missed_burn_003_the_opened_card_moved_to_the_burn_spot(street, before):
    """003 art. 76: 'Turn (River) sans avoir brûlé une carte avant. On la brûle puis on ouvre la suivante.'
    The dealer moves the card to the burn spot: no duplicate card, nothing held."""
    table = _to_the_flop("003")
    table.confirm(), table.confirm(), table.confirm()
    if street == "river":
        table.board("turn", "5s", burn="3h")
        table.confirm(), table.confirm(), table.confirm()
    card(table, "shoe", "Kh")
    card(table, f"board:{street}", "Kh")
    card(table, "burn", "Kh")
    card(table, "shoe", "2c")
    card(table, f"board:{street}", "2c")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, table.engine.on_hold) == ("missed-burn", "003 art. 76", None)
    assert _burned(table)[-1] == (street, "Kh") and table.engine.hand.game.board == (*before, "2c")


def test_missed_burn_000_the_board_stands():
    table = three_handed("000")
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.sweep()
    for c in ("7c", "8c", "9c"):
        card(table, "board:flop", c)
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule) == ("missed-burn", "002 C.3 (house 000 is silent)")
    assert table.engine.hand.game.board == ("7c", "8c", "9c")


def test_extra_burn_goes_back_for_the_next_street_002_c3():
    table = three_handed()
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.sweep()
    card(table, "burn", "2d")
    card(table, "burn", "Jd")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor) == ("extra-burn", "002 C.3 (house 000 is silent)", False)
    for c in ("7c", "8c", "9c"):
        card(table, "board:flop", c)
    table.confirm(), table.confirm()
    table.board("turn", "5s", burn="Jd")    # the extra burn is the turn's burn
    assert [e.card for e in table.events if isinstance(e, ev.CardBurned)] == ["2d", "Jd"]


# -- after substantial action and resolution rules -------------------------------------------------

def test_same_facts_after_substantial_action_are_not_a_misdeal_000_35d():
    table = three_handed()
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50)
    card(table, "seat:7", "2c")
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor) == ("card-to-seat-not-dealt-in", "000 §35D", False)
    assert "the hand continues" in irr.procedure and table.engine.on_hold is None


def test_a_resolution_that_is_not_an_option_is_refused_and_the_hand_stays_on_hold():
    table = three_handed()
    card(table, "seat:2", "As")
    table.feed(Resolution(table.tick(), "td", "continue"))
    assert table.irregularities()[-1].irregularity == "bad-resolution"
    assert table.engine.on_hold == "first-card-wrong-seat"


def test_clean_hands_raise_no_irregularity_in_any_house():
    for profile in ("000", "001", "002", "003", "004"):
        table = Table({1: 10000, 2: 10000, 3: 10000}, button=3, profile=profile)
        table.new_hand()
        table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
        table.push(3, 100), table.push(1, 50), table.confirm()
        table.board("flop", "7c8c9c")
        table.push(1, 100), table.fold(2), table.push(3, 100)
        table.board("turn", "2h")
        table.confirm(), table.confirm()
        table.board("river", "3s")
        table.confirm(), table.confirm(), table.confirm()
        assert not table.irregularities(), profile
        assert table.ended() and not table.ended().voided


# -- TD commands: pause, void ------------------------------------------------------------------

def test_td_pause_holds_play_and_resume_applies_it():
    from firmware_host.observations import Pause
    table = three_handed()
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.feed(Pause(table.tick(), True, "break"))
    table.push(3, 100)
    assert table.actions() == [] and table.engine.paused
    table.feed(Pause(table.tick(), False))
    assert table.actions() == [(3, "call", 100)]
    assert [n.notice for n in notices(table)] == ["table-paused", "table-resumed"]    # notices, not irregularities
    assert notices(table)[0].rule == "000 §1" and not table.irregularities()


def test_td_void_hand_returns_every_bet_and_replays():
    from firmware_host.observations import VoidHand
    table = three_handed()
    first = started(table)[-1]
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100, 100, 100)
    table.feed(VoidHand(table.tick(), 7, "wrong hand number"))
    assert table.irregularities()[-1].irregularity == "no-such-hand" and table.engine.in_hand
    table.feed(VoidHand(table.tick(), first.hand, "camera saw a marked card"))
    assert notices(table)[-1].notice == "hand-voided" and notices(table)[-1].rule == "000 §1"
    assert_void_and_replay(table, first)


# -- the camera's face-up cards: it sees that a seat's card lies face up, not which -----------------

def test_camera_face_up_during_the_deal_is_the_card_the_seat_was_dealt_last():
    table = three_handed("002")
    for c, seat in (("As", 1), ("Ks", 2), ("Qs", 3), ("Ad", 1), ("Kd", 2)):
        card(table, f"seat:{seat}", c)
    table.feed(CardExposed(table.tick(), "seat:2"))        # Kd landed face up
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats, irr.cards) == ("exposed-card-replaced", "002 C.2", (2,), ("Kd",))
    table.confirm()
    table.feed(CardExposed(table.tick(), "seat:2"))        # still face up on the next look: the same card
    assert len(table.irregularities()) == 1
    first = three_handed("002")
    card(first, "seat:1", "As")
    first.feed(CardExposed(first.tick(), "seat:1"))
    assert first.irregularities()[0].irregularity == "exposed-card-misdeal"   # one of the first two cards (002 C.2)


def test_camera_face_up_after_the_deal_names_the_seat_not_a_card():
    table = three_handed("000")
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.feed(CardExposed(table.tick(), "seat:3"))
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.seats, irr.cards, irr.needs_floor) == (
        "player-exposed-cards", "000 §68", (3,), (), False)   # which card is not guessed, nor published
    table.feed(CardExposed(table.tick(), "seat:3"))
    table.feed(CardExposed(table.tick(), "seat:3", "Qd"))   # the other card, named by a script
    assert [i.cards for i in table.irregularities()] == [(), ("Qd",)]
    table.push(3, 100)
    assert table.actions() == [(3, "call", 100)]      # the hand goes on


def test_camera_face_up_is_nothing_without_cards_or_once_the_betting_is_over():
    table = three_handed("000")
    table.feed(CardExposed(table.tick(), "seat:2"))        # nothing dealt yet
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
    table.push(3, 100), table.push(1, 50), table.confirm()
    table.board("flop", "7c8c9c", burn="2d")
    for street, c, burn in (("turn", "Tc", "3d"), ("river", "Jh", "4d")):
        for _seat in (1, 2, 3):
            table.confirm()
        table.board(street, c, burn=burn)
    for _seat in (1, 2, 3):
        table.confirm()
    assert table.engine.hand is not None and table.engine.hand.game.actor is None   # showdown
    table.feed(CardExposed(table.tick(), "seat:1"))        # cards shown at showdown
    assert table.irregularities() == []


HOUSES = ("000", "001", "002", "003", "004")


@pytest.mark.parametrize("house", HOUSES)
def test_every_irregularity_of_every_scenario_cites_the_active_house_in_french_and_english(tmp_path, house):
    """Issue 13 item 4: every scenario of tests/scenarios played under each house; every irregularity
    cites a rule of that house or says "house N is silent", and states the procedure in French and in
    English (seen before: house 000 citing "003 art. 76", an empty procedure_fr)."""
    import re

    from firmware_host.hil.recording import load
    from firmware_host.hil.replay import replay
    from firmware_host.sim.simulate import simulate

    seen = 0
    for script in sorted((Path(__file__).parent / "scenarios").glob("*.txt")):
        text = re.sub(r"^profile \d{3}$", f"profile {house}", script.read_text(), flags=re.M)
        recording = simulate(text if "\nprofile " in f"\n{text}" else f"profile {house}\n{text}")
        events = replay(load(recording.save(tmp_path / script.stem)))
        for e in events:
            if isinstance(e, ev.Irregularity):
                seen += 1
                where = (script.stem, e.irregularity, e.rule)
                assert e.rule.startswith(house) or f"(house {house} is silent)" in e.rule, where
                assert e.procedure.strip() and e.procedure_fr.strip(), where
    assert seen >= 20                        # the corpus does reach the irregularities


def test_the_tds_notices_cite_the_active_house_or_say_it_is_silent():
    """Issue 13 items 4 and 8: the TD's pause and void cite 000 §1 (the TD decides), saying the other
    houses are silent; the voided hand returns every bet and says why."""
    from firmware_host.observations import Pause, VoidHand
    for house in ("000", "003"):
        table = three_handed(house)
        table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd"})
        table.push(3, 300)
        out = table.feed(VoidHand(table.tick(), 1, "wrong deck in play"))
        out += table.feed(Pause(table.tick(), True, "dinner"))
        notices = {e.notice: e for e in out if isinstance(e, ev.Notice)}
        rule = "000 §1" if house == "000" else "000 §1 (house 003 is silent)"
        assert {n.rule for n in notices.values()} == {rule}
        assert "wrong deck in play" in notices["hand-voided"].text
        ended = [e for e in out if isinstance(e, ev.HandEnded)][-1]
        assert ended.voided and sorted(ended.stacks) == [10000, 10000, 10000]
