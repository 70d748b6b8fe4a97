"""The hand engine, driven by the observations a table makes; each rulebook example cited."""
import dataclasses
import json
from typing import get_args

from firmware_host import events as ev
from firmware_host.cli.display import describe
from firmware_host.observations import (
    OBSERVATION_TYPES,
    CardEntered,
    ChipsInZone,
    ConsoleButton,
    DeviceFault,
    DeviceRecovered,
    SetLevel,
)
from firmware_host.rules.engine import PRESSES, ROUTES, HandEngine
from firmware_host.rules.profile import builtin_profile
from firmware_host.sim.demo import script
from table import Table


def four_handed(**kw) -> Table:
    table = Table({1: 10000, 2: 10000, 3: 10000, 4: 10000}, button=4, **kw)
    table.new_hand()
    table.deal({1: "AsAd", 2: "KsKd", 3: "7c2d", 4: "QhJh"})
    return table


def test_full_hand_to_showdown():
    table = four_handed()
    started = [e for e in table.events if isinstance(e, ev.HandStarted)][0]
    assert (started.button, started.small_blind_seat, started.big_blind_seat) == (4, 1, 2)
    assert started.seats == (1, 2, 3, 4) and started.posted == (50, 100, 0, 0)
    dealt = [e for e in table.events if isinstance(e, ev.HoleCardDealt)]
    assert [e.seat for e in dealt] == [1, 2, 3, 4] * 2 and all(e.SECRET for e in dealt)

    table.fold(3)
    table.push(4, 100, 100, 100)
    table.push(1, 100, 100, 50)
    table.push(2, 100, 100)
    table.board("flop", "Kh7h2h")
    table.confirm()
    table.push(2, 500)
    table.fold(4)
    table.push(1, 500)
    table.board("turn", "3c")
    table.confirm(), table.confirm()
    table.board("river", "4d")
    table.confirm(), table.confirm()
    table.confirm()  # hands tabled
    assert table.actions() == [
        (3, "fold", 0), (4, "raise", 300), (1, "call", 300), (2, "call", 300),
        (1, "check", 0), (2, "bet", 500), (4, "fold", 0), (1, "call", 500),
        (1, "check", 0), (2, "check", 0), (1, "check", 0), (2, "check", 0),
    ]
    shown = [e for e in table.events if isinstance(e, ev.HandShown)]
    assert {e.seat for e in shown} == {1, 2}
    (award,) = table.awards()
    assert (award.amount, award.winners, award.amounts) == (1900, (2,), (1900,))
    assert award.ranks[0].startswith("Three of a kind")
    assert table.final() == {1: 9200, 2: 11100, 3: 10000, 4: 9700}
    assert not table.irregularities()
    seqs = [e.seq for e in table.events]
    assert seqs == list(range(1, len(seqs) + 1))


def test_000_43_silent_1400_facing_1000_is_a_call():
    """000 §43A: NLHE, 1000 opened, 1400 pushed silently with no raise declared = a call."""
    table = four_handed()
    table.push(3, 500, 500)
    table.push(4, 1000, 100, 100, 100, 100)
    action = table.last_action()
    assert (action.action, action.total, action.returned) == ("call", 1000, 400)
    assert action.rule.startswith("000 §4")


def test_000_45_ex1_500_and_1000_facing_1100_is_a_call():
    """000 §45 Ex-1: A opens 400, B raises to 1100, C pushes a 500 and a 1000 silently: a call."""
    table = Table({s: 10000 for s in range(1, 7)}, button=6)
    table.new_hand()
    table.deal({1: "2c3c", 2: "4c5c", 3: "6c7c", 4: "8c9c", 5: "TcJc", 6: "QcKc"})
    table.push(3, 100, 100, 100, 100)
    table.push(4, 1000, 100)
    table.push(5, 1000, 500)
    assert table.actions()[-3:] == [(3, "raise", 400), (4, "raise", 1100), (5, "call", 1100)]
    assert table.last_action().returned == 400


def test_000_45_ex2_last_two_1000_chips_facing_1050_is_a_call():
    """000 §45 Ex-2: NLHE 25-50, post-flop A bets 1050, B pushes his last two 1000 chips: B has called."""
    table = Table({1: 5000, 2: 5000, 3: 2050}, button=3, blinds=(25, 50))
    table.new_hand()
    table.deal({1: "AsKs", 2: "7c2d", 3: "QhQd"})
    table.push(3, 25, 25)
    table.push(1, 25)
    table.confirm()
    table.board("flop", "9h8h2c")
    table.push(1, 1000, 25, 25)
    table.fold(2)
    table.push(3, 1000, 1000)
    action = table.last_action()
    assert (action.seat, action.action, action.total, action.all_in, action.returned) == (3, "call", 1050, False, 950)


def test_000_52_underraise_corrected_to_1200():
    """000 §52A: NLHE 100-200, post-flop A opens 600, B raises to 1000: corrected to 1200."""
    table = Table({1: 10000, 2: 10000, 3: 10000, 4: 10000}, button=4, blinds=(100, 200))
    table.new_hand()
    table.deal({1: "AsAd", 2: "KsKd", 3: "7c2d", 4: "QhJh"})
    table.push(3, 100, 100), table.push(4, 100, 100), table.push(1, 100), table.confirm()
    table.board("flop", "Kh7h2h")
    table.push(1, 500, 100)
    table.push(2, 500, 500, declared="raise", amount=1000)
    action = table.last_action()
    assert (action.action, action.total, action.owed) == ("raise", 1200, 200)
    assert "§43" in action.rule or "§52" in action.rule


def test_000_61_overbet_for_change_is_a_raise_to_650():
    """000 §61: facing 325, A silently pushes 525 (a 500 and a 25) expecting change: a raise to 650."""
    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3, blinds=(25, 50))
    table.new_hand()
    table.deal({1: "AsAd", 2: "KsKd", 3: "7c2d"})
    table.push(3, 25, 25), table.push(1, 25), table.confirm()
    table.board("flop", "Kh7h2h")
    table.push(1, 100, 100, 100, 25)
    table.push(2, 500, 25)
    action = table.last_action()
    assert (action.action, action.total, action.owed) == ("raise", 650, 125)


def test_000_44_single_chip_post_flop_first_bet_is_its_value():
    """000 §44: not facing a bet, a single oversized chip pushed silently is a bet of the chip's value."""
    table = four_handed()
    table.fold(3), table.push(4, 100), table.push(1, 50), table.confirm()
    table.board("flop", "Kh7h2h")
    table.push(1, 1000)
    assert table.last_action().action == "bet" and table.last_action().total == 1000


def _tie(profile: str, chip_unit=None) -> Table:
    table = Table({1: 5000, 2: 5000, 3: 5000}, button=3, profile=profile, chip_unit=chip_unit)
    table.new_hand()
    table.deal({1: "6c7d", 2: "2c3d", 3: "4c5d"})
    table.push(3, 100)
    table.fold(1)
    table.confirm()
    for street, cards in (("flop", "AsKsQs"), ("turn", "Js"), ("river", "Ts")):
        table.board(street, cards)
        table.confirm(), table.confirm()
    table.confirm()
    return table


def test_000_20_odd_chip_to_first_seat_left_of_the_button():
    """000 §20A: a split pot's odd chip (of the smallest denomination) goes to the first seat left of the button."""
    table = _tie("000", chip_unit=50)   # smallest chip in play: 50
    (award,) = table.awards()
    assert award.amount == 250 and award.winners == (2, 3)
    assert award.amounts == (150, 100) and award.odd_chip_rule == "000 §20A"
    assert sum(table.final().values()) == 15000


def test_000_20_odd_chips_among_four_winners_go_one_by_one_from_the_left_of_the_button():
    """000 §20A (issue 13 item 6): the board plays for four; the small blind's 50 folded in makes a pot of
    450, 100 each and two odd chips of 25: seats 1 and 2 (first left of the button 5) take one each.
    pokerkit gave both to seat 1 (150, 100, 100, 100)."""
    table = Table({1: 5000, 2: 5000, 3: 5000, 4: 5000, 5: 5000}, button=5, blinds=(50, 100))
    table.new_hand()
    table.deal({1: "2c3d", 2: "4c5d", 3: "6c7d", 4: "8c2d", 5: "3c4d"})
    table.push(3, 100), table.push(4, 100), table.push(5, 100)
    table.fold(1)
    table.confirm()
    for street, cards in (("flop", "AsKsQs"), ("turn", "Js"), ("river", "Ts")):
        table.board(street, cards)
        for _ in range(4):
            table.confirm()
    table.confirm()                                       # showdown: the hands are tabled
    (award,) = table.awards()
    assert award.amount == 450 and award.winners == (2, 3, 4, 5)
    assert award.amounts == (125, 125, 100, 100) and award.odd_chip_rule == "000 §20A"
    assert table.final() == {1: 4950, 2: 5025, 3: 5025, 4: 5000, 5: 5000}   # the stacks take what was awarded


def test_004_bb_odd_chip_stays_in_the_pot_for_the_next_hand():
    """004 B.b: the odd chip is left in the pot for the next hand."""
    table = _tie("004")
    (award,) = table.awards()
    assert award.amounts == (100, 100) and award.carried == 50
    assert table.ended().carried == 50 and sum(table.final().values()) == 15000 - 50
    # next hand: the main pot's winner takes the carried chip
    table.new_hand()
    table.deal({2: "2h3h", 3: "4h5h", 1: "9c9d"})   # button 1: the deal starts at seat 2
    table.fold(1)
    table.fold(2)
    award = table.awards()[-1]
    assert award.winners == (3,) and award.amounts == (100,) and table.ended().carried == 0
    assert table.final()[3] == 5000 + 50 + 50  # the small blind, and the carried chip
    assert sum(table.final().values()) == 15000


def test_side_pots_with_three_all_ins():
    table = Table({1: 1000, 2: 2000, 3: 3000, 4: 5000}, button=4)
    table.new_hand()
    table.deal({1: "AsAd", 2: "KsKd", 3: "QsQd", 4: "JsJd"})
    table.push(3, 1000, 1000, 500, 500)
    table.push(4, 1000, 1000, 1000)
    table.push(1, 500, 100, 100, 100, 100, 50)
    table.push(2, 1000, 500, 100, 100, 100, 100)
    assert [(a.seat, a.action, a.total, a.all_in) for a in table.events if isinstance(a, ev.ActionTaken)] == [
        (3, "raise", 3000, True), (4, "call", 3000, False), (1, "call", 1000, True), (2, "call", 2000, True)]
    assert {e.seat for e in table.events if isinstance(e, ev.HandShown)} == {1, 2, 3, 4}  # 000 §16
    table.board("flop", "2c7h9d", burn="8c")
    table.board("turn", "3c", burn="8d")
    table.board("river", "4h", burn="8h")
    pots = [(a.pot, a.amount, a.seats, a.winners) for a in table.awards()]
    assert pots == [(0, 4000, (1, 2, 3, 4), (1,)), (1, 3000, (2, 3, 4), (2,)), (2, 2000, (3, 4), (3,))]
    assert table.final() == {1: 4000, 2: 3000, 3: 2000, 4: 2000}


def test_heads_up_switch_nobody_big_blind_twice():
    """000 §34, 003 art. 71: going heads-up, the button moves so no player is big blind twice in a row."""
    table = Table({1: 50, 2: 10000, 3: 10000}, button=3)
    table.new_hand()
    table.deal({1: "2c7d", 2: "AsAd", 3: "KhQh"})
    table.fold(3)
    table.board("flop", "Kd8s3c"), table.board("turn", "4h"), table.board("river", "9d")
    assert table.final()[1] == 0
    started = table.new_hand()[-1]
    assert started.seats == (3, 2) or set(started.seats) == {2, 3}
    assert started.big_blind_seat == 3, "seat 2 was big blind last hand"
    assert started.button == started.small_blind_seat == 2


def test_000_23_level_change_starts_on_next_hand():
    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3)
    table.new_hand()
    table.deal({1: "2c7d", 2: "AsAd", 3: "KhQh"})
    table.feed(SetLevel(table.tick(), 100, 200))
    table.fold(3)
    table.fold(1)
    assert table.final() == {1: 9950, 2: 10050, 3: 10000}
    started = table.new_hand()[-1]
    assert (started.small_blind, started.big_blind) == (100, 200)


def test_000_35c_misdeal_replays_same_button_and_blinds():
    table = Table({1: 10000, 2: 10000, 3: 10000, 4: 10000}, button=4)
    first = table.new_hand()[-1]
    table.feed(CardEntered(table.tick(), "seat:1", "As"))
    table.press("misdeal")
    assert table.irregularities()[-1].irregularity == "misdeal"
    ended = table.ended()
    assert ended.voided and set(ended.stacks) == {10000}
    replay = table.new_hand()[-1]
    assert replay.replay and (replay.button, replay.small_blind_seat, replay.big_blind_seat) == (
        first.button, first.small_blind_seat, first.big_blind_seat)
    assert replay.hand == first.hand + 1


def test_000_35d_no_misdeal_after_substantial_action():
    table = four_handed()
    table.push(3, 100), table.push(4, 100)
    assert table.engine.substantial_action
    table.press("misdeal")
    assert table.irregularities()[-1].irregularity == "misdeal-after-substantial-action"
    assert table.irregularities()[-1].rule == "000 §35D" and table.engine.in_hand


def test_substantial_action_000_36_and_003_47():
    """000 §36: two folds are not substantial action, three actions are; 003 art. 47: any two actions."""
    for profile, after_two_folds in (("000", False), ("003", True)):
        table = Table({s: 10000 for s in range(1, 6)}, button=5, profile=profile)
        table.new_hand()
        table.deal({1: "2c3c", 2: "4c5c", 3: "6c7c", 4: "8c9c", 5: "TcJc"})
        table.fold(3), table.fold(4)
        assert table.engine.actions == 2
        assert table.engine.substantial_action is after_two_folds, profile
        table.push(5, 100)
        assert table.engine.substantial_action


def test_duplicate_card_is_refused_000_35e():
    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3)
    table.new_hand()
    table.feed(CardEntered(table.tick(), "shoe", "As"))
    table.feed(CardEntered(table.tick(), "seat:1", "As"))
    table.feed(CardEntered(table.tick(), "shoe", "As"))       # the same card drawn again: two decks mixed
    table.feed(CardEntered(table.tick(), "seat:2", "As"))     # held: the hand waits for the floor
    dealt = [e for e in table.events if isinstance(e, ev.HoleCardDealt)]
    assert [(e.seat, e.card) for e in dealt] == [(1, "As")]
    (irr,) = table.irregularities()
    assert (irr.irregularity, irr.rule, irr.needs_floor) == ("duplicate-card", "000 §35E", True)
    assert table.engine.on_hold == "duplicate-card"


def test_implied_checks_when_next_seat_acts_or_street_closes():
    table = four_handed()
    table.fold(3), table.push(4, 100), table.push(1, 50), table.confirm()
    table.board("flop", "Kh7h2h")
    table.push(2, 200)          # seat 1 did not act: its check is implied
    assert table.actions()[-2:] == [(1, "check", 0), (2, "bet", 200)]
    table.push(4, 100, 100), table.push(1, 100, 100)
    table.board("turn", "3c")
    assert table.actions()[-1] == (1, "call", 200)
    table.board("river", "5s")  # nobody acted on the turn: the burn closes the street
    assert table.actions()[-3:] == [(1, "check", 0), (2, "check", 0), (4, "check", 0)]


def test_action_out_of_turn_is_held_until_its_turn():
    table = four_handed()
    table.push(4, 100)          # seat 3 faces the big blind: 4 is out of turn
    assert table.actions() == []
    table.fold(3)
    assert table.actions() == [(3, "fold", 0), (4, "call", 100)]


def test_premature_flop_card_is_reported_not_dealt():
    table = four_handed()
    table.fold(3)
    table.feed(CardEntered(table.tick(), "board:flop", "9s"))
    (irr,) = table.irregularities()
    assert irr.irregularity == "premature-card" and irr.rule == "000 §39 (TDA RP-5)" and irr.seats == (4,)
    assert not [e for e in table.events if isinstance(e, ev.BoardDealt)]


def test_same_observations_same_events_bytes():
    def run():
        engine = HandEngine(builtin_profile("000"), "demo-1")
        return [e.to_json() for obs in script() for e in engine.feed(obs)]
    first, second = run(), run()
    assert first == second and len(first) > 50


def test_events_are_versioned_json_and_round_trip():
    engine = HandEngine(builtin_profile("000"), "demo-1")
    kinds = set()
    for obs in script():
        for event in engine.feed(obs):
            body = json.loads(event.to_json())
            assert body["schema"] == "pokertable.event" and body["version"] == 1
            assert {"table", "hand", "seq", "t", "kind"} <= set(body)
            assert ev.from_dict(body) == event
            kinds.add(body["kind"])
    assert {"hand-started", "hole-card-dealt", "action", "board-dealt", "card-burned", "pot-awarded",
            "hand-ended", "irregularity", "hand-shown"} <= kinds


def test_chips_from_a_seat_not_in_the_hand_are_reported():
    table = four_handed()
    table.fold(3)
    table.feed(ChipsInZone(table.tick(), "bet:3", 500, ((500, 1),)))
    assert table.irregularities()[-1].irregularity == "chips-from-seat-not-in-hand"


def test_every_observation_type_has_a_route_and_every_console_button_a_press():
    assert set(ROUTES) == set(OBSERVATION_TYPES.values())
    assert set(PRESSES) == set(get_args(ConsoleButton))
    applied_at_once = {cls.__name__ for cls, route in ROUTES.items() if not route.waits}
    assert applied_at_once == {"Resolution", "ConsolePress", "DeviceFault", "DeviceRecovered", "SetLevel",
                               "SeatPresence", "Pause", "VoidHand"}     # the rest waits for the floor's ruling


def test_a_device_working_again_is_a_notice_not_an_irregularity():
    table = four_handed()
    fault = table.feed(DeviceFault(table.tick(), "shoe", "disconnected", "USB cable pulled"))
    back = table.feed(DeviceRecovered(table.tick(), "shoe"))
    assert [e.irregularity for e in fault] == ["device-fault:disconnected"]
    (notice,) = back
    assert isinstance(notice, ev.Notice) and (notice.notice, notice.text) == ("device-recovered", "shoe: working again")
    assert notice.notice in ev.NOTICES and ev.from_dict(json.loads(notice.to_json())) == notice
    assert describe(notice).endswith("-- device-recovered: shoe: working again")


def test_pot_awarded_is_a_pot_with_its_odd_chip_rule_and_carried_chips():
    pot_fields = [f.name for f in dataclasses.fields(ev.Pot)]
    awarded = [f.name for f in dataclasses.fields(ev.PotAwarded)]
    assert awarded == ["table", "hand", "seq", "t", *pot_fields, "odd_chip_rule", "carried"]
    table = _tie("004")
    (award,) = table.awards()
    assert isinstance(award, ev.Pot) and award.odd_chip_rule == "004 B.b"
