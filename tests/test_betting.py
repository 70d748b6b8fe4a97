"""Chips pushed become actions (firmware_host.rules.betting): each rulebook example cited, each house variant."""
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from firmware_host.rules.betting import BettingError, BettingRules, Push, Situation, min_raise_to, rule
from firmware_host.rules.profile import builtin_profile

TDA = BettingRules(min_raise="tda", short_raise="fifty-percent")        # 000 §43A; 002 C.4
FFJP = BettingRules(min_raise="double", short_raise="call")             # 001 'Les Relances'
CASINO = BettingRules(min_raise="double", short_raise="fifty-percent")  # 003 art. 51-52
LEAGUE = BettingRules(min_raise="bb-multiple-above", short_raise="call")      # 004 A.e-g, 'Règles du jeu' 5
TDA_MULTIPLE = BettingRules(min_raise="bb-multiple", short_raise="call")    # the other reading of 004
HOUSES = {"000": TDA, "001": FFJP, "002": TDA, "003": CASINO, "004": LEAGUE}
ALL = pytest.mark.parametrize("house", sorted(HOUSES))


def sit(highest, own=0, stack=10_000, *, street="flop", bb=100, inc=None, prev=None, may_raise=True):
    """A betting round; by default *highest* is a single bet (its own increment) or the unraised big blind."""
    return Situation(street, bb, highest, own, stack, highest if inc is None else inc,
                     highest if prev is None else prev, may_raise)


def ruled(situation, *chips, house="000", declared=None, amount=None):
    r = rule(situation, Push(tuple(chips), declared, amount), HOUSES[house])
    return r.kind, r.total, r.returned, r.owed


@pytest.mark.parametrize("house", sorted(HOUSES))
def test_profiles_set_these_variants(house):
    """The profiles' [betting] tables are the variants tested here (000 §43A, 001, 002 C.4, 003 art. 51, 004 A.g)."""
    assert builtin_profile(house).betting == HOUSES[house]


# -- a single chip (000 §44, 001 'Les Relances', 003 art. 66, 004 A.i) ---------------------------

@ALL
def test_single_oversized_chip_facing_a_bet_is_a_call(house):
    """000 §44, 001, 003 art. 66, 004 A.i 3rd case: facing a bet, one bigger chip without "raise" = a call."""
    r = rule(sit(200), Push((1000,)), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed, r.all_in) == ("call", 200, 800, 0, False)
    assert r.rule == "000 §44"


@ALL
def test_single_oversized_chip_facing_the_blinds_is_a_call(house):
    """000 §44 "ou aux blinds", 004 A.i 1st case "Avant le flop ... suit simplement la mise"."""
    assert ruled(sit(100, street="preflop"), 5000, house=house) == ("call", 100, 4900, 0)


@ALL
def test_single_last_chip_is_still_a_call(house):
    """000 §44: "(même si c'est votre dernier jeton)" a single chip is a call, not an all-in."""
    r = rule(sit(200, stack=1000), Push((1000,)), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.returned) == ("call", 200, False, 800)


@ALL
def test_big_blind_option_single_chip_is_a_check(house):
    """000 §51B: the posted big blind is the opening bet, so its owner "faces" it:
    000 §44 (004 A.i) single chip = a call, here a check with the chip returned."""
    assert ruled(sit(100, own=100, street="preflop"), 500, house=house) == ("check", 100, 500, 0)


@ALL
def test_single_chip_with_no_bet_faced_is_a_bet_of_its_value(house):
    """000 §44, 001 'Les Relances' "la valeur pleine d'un jeton misé sera engagée", 004 A.i 2nd case."""
    r = rule(sit(0), Push((1000,)), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed) == ("bet", 1000, 0, 0) and r.rule == "000 §44"


@ALL
def test_raise_declared_without_amount_single_chip_raises_its_value(house):
    """000 §44 "la relance est de la valeur du jeton", 001 "jouera à plein", 004 A.i 4th case."""
    r = rule(sit(200), Push((1000,), "raise"), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed) == ("raise", 1000, 0, 0) and r.rule == "000 §44"


@pytest.mark.parametrize("house, expected", [(h, ("raise", 600, 0, 100)) for h in ("000", "001", "002", "003")]
                         + [("004", ("raise", 500, 0, 0))])
def test_raise_declared_with_a_chip_too_small_is_completed(house, expected):
    """000 §52A, 001 "contraint de compléter la relance au double légale": 300 bet, "raise" + one 500 chip.
    004 'Règles du jeu' 5: 500 is a multiple of the big blind above 300: a full raise."""
    assert ruled(sit(300), 500, house=house, declared="raise") == expected


# -- several chips (000 §45, 003 art. 66) ----------------------------------------------------------

@ALL
def test_000_45_ex1_500_and_1000_facing_1100_is_a_call(house):
    """000 §45A Ex-1: A opens 400, B raises to 1100, C pushes a 500 and a 1000 silently: without the 500
    less than 1100 remains, a call (003 art. 66: the 2nd chip is a "reliquat")."""
    situation = sit(1100, inc=700)
    r = rule(situation, Push((500, 1000)), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed) == ("call", 1100, 400, 0) and r.rule == "000 §45A"


@ALL
def test_000_45_ex2_last_two_1000_chips_facing_1050_is_a_call(house):
    """000 §45A Ex-2: NLHE 25-50, post-flop A bets 1050, B pushes his last two 1000 chips: B has just called."""
    r = rule(sit(1050, stack=2000, bb=50), Push((1000, 1000)), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.returned) == ("call", 1050, False, 950) and r.rule == "000 §45A"


@pytest.mark.parametrize("house, expected", [(h, ("call", 1000, 400, 0)) for h in ("000", "001", "002", "003")]
                         + [("004", ("raise", 1400, 0, 0))])
def test_000_43_1400_facing_1000_is_a_call(house, expected):
    """000 §43A: 1000 opened, "quatorze cents" said or 1400 pushed silently: a call, no raise declared.
    (003 art. 51: 1400 is less than 50% over 1000; 001: below the minimum without "relance".)
    004 'Règles du jeu' 5: 1400 is a multiple of the big blind above 1000, the minimum: a raise."""
    assert ruled(sit(1000), 1000, 100, 100, 100, 100, house=house) == expected
    assert ruled(sit(1000), 1000, 100, 100, 100, 100, house=house, amount=1400) == expected


def test_000_43_fifty_percent_of_the_increment_is_completed():
    """000 §43A: half the minimum increment or more is completed to the minimum raise; 500 of 1000 is enough."""
    r = rule(sit(1000), Push((1000, 500)), TDA)
    assert (r.kind, r.total, r.owed, r.rule) == ("raise", 2000, 500, "000 §43A")
    assert ruled(sit(1000), 1000, 200, 200) == ("call", 1000, 400, 0)


@pytest.mark.parametrize("house, expected", [
    ("000", ("raise", 1200, 0, 200)),     # 000 §43A: 400 over 600 is 50% or more of 600
    ("003", ("raise", 1200, 0, 200)),     # 003 art. 51: 1000 is 50% or more over 600, completed to double
    ("001", ("call", 600, 400, 0)),       # 001 'Les Relances': below the legal double without "relance"
    ("004", ("raise", 1000, 0, 0)),       # 004 'Règles du jeu' 5: 1000 is a multiple of 200 above 600
])
def test_000_52_underraise_variants_when_silent(house, expected):
    """000 §52A example pushed silently (1000 as a 500 and five 100 over a 600 bet): the houses differ.
    (Two 500 chips would be a call everywhere, 000 §45A: without one 500 less than 600 remains.)"""
    assert ruled(sit(600, bb=200), 500, 100, 100, 100, 100, 100, house=house) == expected
    assert ruled(sit(600, bb=200), 500, 500, house=house) == ("call", 600, 400, 0)


@pytest.mark.parametrize("house, expected", [(h, ("raise", 1200, 0, 200, "000 §52A"))
                                             for h in ("000", "001", "002", "003")]
                         + [("004", ("raise", 1000, 0, 0, "000 §43B"))])
def test_000_52_declared_underraise_is_corrected_to_1200(house, expected):
    """000 §52A: NLHE 100-200, post-flop A opens 600 and B raises to 1000 (an underraise of 200):
    the bet is raised to 1200 in all; 001 'Les Relances': a declared raise is completed to the double.
    004 'Règles du jeu' 5: 1000 is a multiple of the big blind above 600: no underraise."""
    r = rule(sit(600, bb=200), Push((500, 500), "raise", 1000), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed, r.rule) == expected


@pytest.mark.parametrize("house, expected", [
    ("000", ("raise", 650, 0, 125)),      # 000 §61: "C'est ici une relance à 650" (§43A: 200 >= 325 / 2)
    ("003", ("raise", 650, 0, 125)),      # 003 art. 51: 525 is 50% or more over 325, completed to double
    ("001", ("call", 325, 200, 0)),       # 001: below the legal double without "relance", a call
    ("004", ("raise", 500, 25, 0)),       # 004 'Règles du jeu' 5, A.g: above 350, the multiple of 50 below 525
])
def test_000_61_overbet_for_change(house, expected):
    """000 §61: facing 325, A silently pushes a 500 and a 25 expecting 200 back: a raise to 650 (TDA houses)."""
    assert ruled(sit(325, bb=50), 500, 25, house=house) == expected


@pytest.mark.parametrize("pushed, expected", [
    ((1000, 500), ("raise", 2000, 0, 500)),     # exactly 50% over the bet: completed to double
    ((1000, 200, 200), ("call", 1000, 400, 0)),  # under 50% over: "réajustée" to the bet
    ((1000, 1000), ("raise", 2000, 0, 0)),
])
def test_003_51_66_fifty_percent_over_the_previous_bet(pushed, expected):
    """003 art. 51: 50% or more over the previous bet is completed to its double, less is brought back to it;
    003 art. 66: more than one chip above 50% is a raise."""
    assert ruled(sit(1000), *pushed, house="003") == expected


def test_003_51_double_of_a_reraise_versus_tda():
    """Bet 1000, raised to 3000: 1500 over is completed to 5000 (000 §43A TDA) or to 6000 (003 art. 51 double)."""
    situation = sit(3000, inc=2000)
    assert ruled(situation, *[1000] * 4, 500, house="000") == ("raise", 5000, 0, 500)
    assert ruled(situation, *[1000] * 4, 500, house="003") == ("raise", 6000, 0, 1500)


# -- the minimum raise (000 §43A, 001, 003 art. 51-52, 004 A.f-g) -------------------------------

@pytest.mark.parametrize("situation, tda, double, bb_multiple, above", [
    (sit(100, street="preflop"), 200, 200, 200, 200),        # 000 §43A: first raise = BB; double of the BB
    (sit(0), 100, 100, 100, 100),                             # 000 §43A, 004 A.f: the minimum bet is the BB
    (sit(500, inc=300), 800, 1000, 800, 600),                 # bet 200, raised to 500
    (sit(3000, inc=2000), 5000, 6000, 5000, 3100),            # bet 1000, raised to 3000
    (sit(250, inc=100, prev=200, street="preflop"), 350, 400, 400, 400),  # short all-in to 250 over 200
    (sit(500, inc=300, stack=600), 600, 600, 600, 600),       # capped at the all-in
])
def test_min_raise_to_per_house(situation, tda, double, bb_multiple, above):
    """000 §43A TDA increment; 000 §43A French "Double Raise", 001 'Les Relances', 003 art. 51;
    004 'Règles du jeu' 5 "un multiple de la big blind supérieur à la relance précédente" read to the
    letter (the house's profile) or as TDA rounded to a multiple; §47A: short all-ins leave the last full
    increment."""
    assert min_raise_to(situation, TDA) == tda
    assert min_raise_to(situation, FFJP) == min_raise_to(situation, CASINO) == double
    assert min_raise_to(situation, TDA_MULTIPLE) == bb_multiple
    assert min_raise_to(situation, LEAGUE) == above


def test_004_the_letter_any_multiple_above_the_previous_raise():
    """004 'Règles du jeu' 5: "si la big blind est 100, on peut relancer à 200 ou 500 mais pas à 50 ou 150";
    a re-raise need only be the next multiple above: after a raise to 400, a raise to 500 stands."""
    opened = sit(100, street="preflop")
    assert ruled(opened, 100, 100, house="004", declared="raise", amount=200)[:2] == ("raise", 200)
    assert ruled(opened, 500, house="004", declared="raise", amount=500)[:2] == ("raise", 500)
    assert ruled(opened, 100, 50, house="004")[:2] == ("call", 100)     # 150: no raise, a call (004 A.e)
    reraise = sit(400, street="preflop", inc=300, prev=100)
    assert ruled(reraise, 500, house="004", declared="raise", amount=500)[:2] == ("raise", 500)
    assert min_raise_to(reraise, TDA_MULTIPLE) == 700                   # the other reading refuses it


@pytest.mark.parametrize("house, expected", [
    ("000", ("raise", 400, 0, 0)),        # 000 §42A: the push is the raise
    ("001", ("raise", 400, 0, 0)),        # 001: at least the double (400) is reached
    ("004", ("raise", 400, 0, 0)),
])
def test_silent_full_raise(house, expected):
    """000 §45B-1: more than a call after removing the smallest chip, and at least the minimum: a raise."""
    assert ruled(sit(100, street="preflop"), 100, 100, 100, 100, house=house) == expected


def test_004_g_raise_rounded_down_to_a_multiple_of_the_big_blind():
    """004 A.g, 'Règles du jeu' 5: "relancer à 200 ou 500 mais pas à 50 ou 150": 350 becomes 300, 50 returned."""
    situation = sit(200, street="preflop", inc=100)
    r = rule(situation, Push((200, 100, 50)), LEAGUE)
    assert (r.kind, r.total, r.returned, r.rule) == ("raise", 300, 50, "004 A.g")
    assert ruled(situation, 200, 200, house="004", declared="raise", amount=350) == ("raise", 300, 100, 0)
    assert ruled(situation, 200, 100, 50) == ("raise", 350, 0, 0)      # 000: no multiple required


def test_004_g_all_in_need_not_be_a_multiple():
    """004 A.g: "Si ce ne peut être le cas, le joueur doit mettre en jeu tout son tapis"."""
    r = rule(sit(200, street="preflop", inc=100, stack=350), Push((200, 100, 50), "all-in"), LEAGUE)
    assert (r.kind, r.total, r.all_in) == ("raise", 350, True)


def test_004_f_underbet_is_completed_to_the_big_blind():
    """004 A.f "La mise minimum est égale à la big blind"; 000 §52A: an underbet is corrected."""
    r = rule(sit(0), Push((50,)), LEAGUE)
    assert (r.kind, r.total, r.owed, r.rule) == ("bet", 100, 50, "000 §52A")


# -- short all-ins (000 §45B, §47A; 003 art. 52) ----------------------------------------------------

@pytest.mark.parametrize("house, expected", [
    ("000", ("raise", 1300, 0, 0)),       # 000 §45B-2: all-in "même si il atteint ou pas le seuil de 50%"
    ("003", ("raise", 1300, 0, 0)),       # 003 art. 51 is silent on all-ins: the TDA rule
    ("001", ("call", 1000, 300, 0)),      # 001: below the legal double without "relance", a call
    ("004", ("raise", 1300, 0, 0)),       # 004 'Règles du jeu' 5: above the minimum 1100; all-in (A.g)
])
def test_last_chips_silently_above_a_call(house, expected):
    """000 §45B: facing 1000, a player pushes his last 1300 (a 1000 and three 100) silently."""
    r = rule(sit(1000, stack=1300), Push((1000, 100, 100, 100)), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed) == expected
    assert r.all_in == (expected[0] == "raise")


@ALL
def test_declared_all_in_short_raise(house):
    """000 §45B, §51A: "tapis" declared, 1300 over a 1000 bet: an all-in raise that does not reach the minimum."""
    r = rule(sit(1000, stack=1300), Push((1000, 100, 100, 100), "all-in"), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.returned, r.owed) == ("raise", 1300, True, 0, 0)


@ALL
def test_declared_all_in_with_chips_still_to_push(house):
    """000 §51A: the declaration binds; the chips not yet pushed are owed."""
    r = rule(sit(1000, stack=5000), Push((1000,), "all-in"), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.owed) == ("raise", 5000, True, 4000)


@ALL
def test_000_47_not_reopened_push_above_a_call_is_a_call(house):
    """000 §47A, 003 art. 52: the actor bet 1000, a short all-in made it 1300: he may only call;
    any excess, even silent full-raise chips or a declared raise or all-in, is returned."""
    situation = sit(1300, own=1000, inc=1000, prev=1000, may_raise=False)
    for push in (Push((1000, 1000, 1000)), Push((1000, 1000), "raise"), Push((500, 500), "raise", 5000)):
        r = rule(situation, push, HOUSES[house])
        assert (r.kind, r.total, r.returned, r.owed, r.rule) == ("call", 1300, push.amount - 300, 0, "000 §47A")
    r = rule(situation, Push((1000,), "all-in"), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.returned) == ("call", 1300, False, 700)


# -- undercalls and calls (000 §51-52, 003 art. 53) ------------------------------------------------

@ALL
def test_undercall_is_completed(house):
    """000 §51B, 003 art. 53: less than the bet, not all-in: "elle doit alors être complétée"."""
    r = rule(sit(1000), Push((500,)), HOUSES[house])
    assert (r.kind, r.total, r.returned, r.owed, r.rule) == ("call", 1000, 0, 500, "000 §51B")


@ALL
def test_undercall_of_the_big_blind_preflop(house):
    """000 §51B: "Dans les jeux à blind la BB postée est l'ouverture préflop": 50 pushed against 100."""
    assert ruled(sit(100, street="preflop"), 50, house=house) == ("call", 100, 0, 50)


@ALL
def test_all_in_for_less_than_a_call_is_a_call_all_in(house):
    """000 §45B-2: the last chips are an all-in; less than the bet, it is a call all-in."""
    r = rule(sit(1000, stack=600), Push((500, 100)), HOUSES[house])
    assert (r.kind, r.total, r.all_in, r.returned, r.owed) == ("call", 600, True, 0, 0)


@ALL
def test_declared_call(house):
    """000 §51A: "call" binds to the call, excess returned, shortfall owed; 000 §55A: nothing to call, a check."""
    assert ruled(sit(1000), 1000, 500, house=house, declared="call") == ("call", 1000, 500, 0)
    assert ruled(sit(1000), 500, house=house, declared="call") == ("call", 1000, 0, 500)
    assert ruled(sit(0), house=house, declared="call") == ("check", 0, 0, 0)


@ALL
def test_declared_raise_with_amount_is_the_total(house):
    """000 §43B: A bets 2000, B says "Relance, 8000": 8000 in all; above the stack it is all-in."""
    assert ruled(sit(2000), 5000, 1000, 1000, 1000, house=house, declared="raise", amount=8000) \
        == ("raise", 8000, 0, 0)
    r = rule(sit(2000, stack=6000), Push((5000,), "raise", 8000), HOUSES[house])
    assert (r.total, r.all_in, r.owed) == (6000, True, 1000)


@ALL
def test_raise_declared_with_no_bet_is_at_least_the_minimum_bet(house):
    """000 §55B: declaring a raise with no bet faced obliges at least the minimum bet."""
    assert ruled(sit(0), 50, house=house, declared="raise") == ("bet", 100, 0, 50)


# -- impossible input -------------------------------------------------------------------------------

@pytest.mark.parametrize("situation, push, message", [
    (sit(100), Push((5000, 5000, 1000)), "only 10000 behind"),
    (sit(100), Push((100, -100)), "positive"),
    (sit(100), Push(()), "nothing pushed"),
    (sit(100, own=200), Push((100,)), "above the highest bet"),
    (sit(100, stack=0), Push((), "call"), "all-in"),
    (sit(100, bb=0), Push((100,)), "big blind"),
    (sit(100), Push((100,), "raise", -5), "not positive"),
    (sit(100), Push((100,), "fold"), "unknown declaration"),
])
def test_impossible_input_is_refused(situation, push, message):
    with pytest.raises(BettingError, match=message):
        rule(situation, push, TDA)


# -- properties ---------------------------------------------------------------------------------------

DENOMINATIONS = (25, 50, 100, 500, 1000, 5000)


@st.composite
def cases(draw):
    bb = draw(st.sampled_from((50, 100, 200, 400)))
    street = draw(st.sampled_from(("preflop", "flop", "turn", "river")))
    highest = draw(st.integers(bb, 40 * bb) if street == "preflop" else st.just(0) | st.integers(1, 40 * bb))
    own = draw(st.integers(0, highest))
    chips = tuple(draw(st.lists(st.sampled_from(DENOMINATIONS), max_size=8)))
    stack = max(sum(chips) + draw(st.integers(0, 60 * bb)), 1)
    situation = Situation(street, bb, highest, own, stack, draw(st.integers(0, highest)),
                          draw(st.integers(0, highest)), draw(st.booleans()))
    declared = draw(st.sampled_from((None, None, None, "raise", "all-in", "call", "bet")))
    amount = draw(st.none() | st.integers(own + 1, own + 80 * bb))
    rules = BettingRules(draw(st.sampled_from(("tda", "double", "bb-multiple", "bb-multiple-above"))),
                         draw(st.sampled_from(("fifty-percent", "call"))))
    return situation, Push(chips, declared, amount), rules


@settings(max_examples=3000, deadline=None)
@given(cases())
def test_rulings_stay_within_the_stack_and_the_rules(case):
    s, push, rules = case
    assume(push.chips or push.declared or push.declared_amount is not None)
    r = rule(s, push, rules)
    all_in_total = s.own_bet + s.stack
    assert s.own_bet <= r.total <= all_in_total
    assert r.all_in == (r.total == all_in_total)
    assert r.total >= s.highest_bet or r.all_in
    assert r.returned >= 0 and r.owed >= 0 and not (r.returned and r.owed)
    assert r.returned + (r.total - s.own_bet) == push.amount + r.owed
    assert re.match(r"00[0-4] ", r.rule) and r.reason
    if r.kind in ("bet", "raise"):
        assert s.may_raise and r.total > s.highest_bet
        assert r.total >= min_raise_to(s, rules) or r.all_in
        assert (r.kind == "bet") == (s.highest_bet == 0)
        if rules.min_raise.startswith("bb-multiple") and s.highest_bet and not r.all_in:
            assert r.total % s.big_blind == 0                                   # 004 A.g
    elif r.kind == "check":
        assert r.total == s.own_bet == s.highest_bet
    else:
        assert r.total == min(s.highest_bet, all_in_total) and r.total > s.own_bet
    if push.declared is None and len(push.chips) == 1 and push.declared_amount is None and s.highest_bet:
        assert r.kind in ("check", "call")                                     # 000 §44
    if push.declared == "call":
        assert r.kind in ("check", "call")                                     # 000 §51A
    if push.declared in ("raise", "bet", "all-in") and s.may_raise and all_in_total > s.highest_bet:
        assert r.kind in ("bet", "raise")                                      # 000 §51A, §52A
    if not s.may_raise:
        assert r.kind in ("check", "call")                                     # 000 §47A
    assert min_raise_to(s, rules) <= all_in_total
    assert min_raise_to(s, rules) > s.highest_bet or min_raise_to(s, rules) == all_in_total
