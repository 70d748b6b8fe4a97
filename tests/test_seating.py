"""Button, blinds and seats dealt in (firmware_host.rules.seating): every worked case of the rulebooks."""
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_host.rules.profile import builtin_profile
from firmware_host.rules.seating import Positions, SeatingError, SeatingRules, first_hand, next_hand, replay_hand

TDA = SeatingRules(dead_button=True, new_player="anywhere")                     # 000, 001, 002, 004
CASINO = SeatingRules(dead_button=True, new_player="not-button-or-small-blind")  # 003 art. 27
MOVING = SeatingRules(dead_button=False, new_player="anywhere")                 # no house: 004 'Nouveau tour' alone
BOTH = pytest.mark.parametrize("rules", [TDA, CASINO], ids=["anywhere", "003"])


def seats(p: Positions) -> set[int]:
    """Everybody seated with chips in hand *p*."""
    return set(p.dealt_in) | set(p.waiting)


def after(p: Positions, *out: int, n: int, rules: SeatingRules = TDA, new=()) -> Positions:
    """The next hand, the players of seats *out* eliminated and players seated at *new*."""
    return next_hand(p, (seats(p) - set(out)) | set(new), n, rules, new=new)


def blinds(p: Positions) -> tuple:
    return p.button, p.small_blind, p.big_blind


# -- first hand and normal rotation --------------------------------------------------------------

def test_first_hand_blinds_follow_the_drawn_button():
    """003 art. 22, 004 'Les blinds': the two players after the button post the small and big blind."""
    p = first_hand(range(1, 9), 1, 8, TDA)
    assert blinds(p) == (1, 2, 3)
    assert p.dealt_in == (2, 3, 4, 5, 6, 7, 8, 1) and p.dealer == 1
    assert p.waiting == () and not p.heads_up and p.dead_small_blind is None


def test_first_hand_skips_empty_seats_and_wraps_round():
    """004 'Les blinds': the blinds are the next players, not the next seats."""
    p = first_hand({2, 5, 9, 10}, 9, 10, CASINO)
    assert blinds(p) == (9, 10, 2) and p.dealt_in == (10, 2, 5, 9)


def test_first_hand_heads_up_button_posts_the_small_blind():
    """000 §34, 003 art. 71, 004 C.c: heads-up the button is the small blind; pokerkit order (BB, button)."""
    p = first_hand({3, 7}, 7, 10, TDA)
    assert p.heads_up and blinds(p) == (7, 7, 3) and p.dealt_in == (3, 7)


def test_normal_rotation_moves_button_and_blinds_one_player_each_hand():
    """004 'Nouveau tour', 000 §32: with nobody out everything moves one player clockwise."""
    p = first_hand({1, 3, 4, 7, 9}, 1, 10, TDA)
    seen = [blinds(p)]
    for _ in range(5):
        p = after(p, n=10)
        seen.append(blinds(p))
        assert p.dealt_in[:2] == (p.small_blind, p.big_blind) and p.dealt_in[-1] == p.button
    assert seen == [(1, 3, 4), (3, 4, 7), (4, 7, 9), (7, 9, 1), (9, 1, 3), (1, 3, 4)]


# -- 001 'Déplacement du bouton': the three worked cases ------------------------------------------

START9 = first_hand(range(1, 10), 1, 9, TDA)   # button 1, small blind 2, big blind 3


def test_001_small_blind_eliminated_gives_a_dead_button():
    """001 'Déplacement du bouton' case 1 (000 §32, 003 art. 80): the big blind becomes small blind,
    the player on its left big blind, the button goes to the eliminated seat: "bouton mort"."""
    p = after(START9, 2, n=9)
    assert blinds(p) == (2, 3, 4) and 2 not in p.dealt_in
    assert p.dealt_in == (3, 4, 5, 6, 7, 8, 9, 1)
    assert p.dealer == 1                       # 003 art. 80: button "factuellement une deuxième fois"
    assert "001 'Déplacement du bouton'" in p.rules and "003 art. 80" in p.rules


def test_001_big_blind_eliminated_gives_no_small_blind_then_a_dead_button():
    """001 'Déplacement du bouton' case 2: the small blind becomes button, the player left of the
    eliminated one big blind, no small blind; next hand the button goes to that dead small blind's seat."""
    p = after(START9, 3, n=9)
    assert blinds(p) == (2, None, 4) and p.dead_small_blind == 3
    assert p.dealt_in == (4, 5, 6, 7, 8, 9, 1, 2) and p.dealt_in[0] == p.big_blind
    q = after(p, n=9)
    assert blinds(q) == (3, 4, 5) and q.dealt_in == (4, 5, 6, 7, 8, 9, 1, 2)


def test_001_both_blinds_eliminated():
    """001 'Déplacement du bouton' case 3: the button goes to the eliminated small blind's seat, no small
    blind. The text says the player left of the big blind "devient la petite blind" and in the same breath
    "il n'y a pas de petite blind": read as *grosse* blind (000 §32 and 004 D.c say so)."""
    p = after(START9, 2, 3, n=9)
    assert blinds(p) == (2, None, 4) and p.dead_small_blind == 3
    assert p.dealt_in == (4, 5, 6, 7, 8, 9, 1)


# -- 004 D: dead button, on an 8-seat table ------------------------------------------------------

START8 = first_hand(range(1, 9), 1, 8, TDA)    # button 1, small blind 2, big blind 3


def test_004_Da_big_blind_eliminated_same_dealer_twice():
    """004 D.a: all three buttons move, no small blind next hand, then the blinds resume normally,
    and the same player deals twice in a row."""
    p1 = after(START8, 3, n=8)
    assert blinds(p1) == (2, None, 4) and "004 D.a" in p1.rules
    p2 = after(p1, n=8)
    assert blinds(p2) == (3, 4, 5) and 3 not in p2.dealt_in
    assert (p1.dealer, p2.dealer) == (2, 2)


def test_004_Db_small_blind_eliminated_same_dealer_twice():
    """003 art. 80 ("virtuellement"), 000 §32, 001: the blinds move normally, the button is dead on the
    small blind's empty seat, and the player who had it deals twice."""
    p1 = after(START8, 2, n=8)
    assert (p1.small_blind, p1.big_blind) == (3, 4) and p1.button == 2 and 2 not in p1.dealt_in
    assert (START8.dealer, p1.dealer) == (1, 1) and "004 D.b" in p1.rules
    p2 = after(p1, n=8)
    assert blinds(p2) == (3, 4, 5) and p2.dealer == 3


def test_004_Db_the_button_stays_in_front_of_the_same_player():
    """004 D.b: "les boutons small blind et big blind sont déplacés normalement. Le bouton dealer reste
    devant le même joueur qui distribuera deux fois de suite": the button is reported on seat 1, not on
    the busted small blind's empty seat 2 (issue 13 item 5)."""
    house = builtin_profile("004").seating
    assert house.button_when_small_blind_out == "stays"
    p1 = after(START8, 2, n=8, rules=house)
    assert blinds(p1) == (1, 3, 4) and p1.dealer == 1 and 2 not in p1.dealt_in
    p2 = after(p1, n=8, rules=house)
    assert blinds(p2) == (3, 4, 5) and p2.dealer == 3
    both = after(START8, 2, 3, n=8, rules=house)         # 004 D.c: both blinds out, the button moves on
    assert blinds(both) == (2, None, 4)
    for house_id in ("000", "001", "002", "003"):         # the others: a dead button on the empty seat
        assert after(START8, 2, n=8, rules=builtin_profile(house_id).seating).button == 2, house_id


def test_004_Dc_both_blinds_eliminated_same_dealer_three_hands():
    """004 D.c: the button goes where the small blind was, no small blind; next hand where the big blind
    was eliminated; the same player deals three hands in a row."""
    p1 = after(START8, 2, 3, n=8)
    assert blinds(p1) == (2, None, 4) and p1.dealt_in == (4, 5, 6, 7, 8, 1) and "004 D.c" in p1.rules
    p2 = after(p1, n=8)
    assert blinds(p2) == (3, 4, 5) and p2.dealt_in == (4, 5, 6, 7, 8, 1)
    assert (START8.dealer, p1.dealer, p2.dealer) == (1, 1, 1)
    assert blinds(after(p2, n=8)) == (4, 5, 6)


@pytest.mark.parametrize("out", [(2,), (3,), (2, 3)], ids=["D.b", "D.a", "D.c"])
def test_004_Dd_every_player_still_in_pays_the_big_blind_each_round(out):
    """004 D.d: whatever is eliminated, the big blind goes round every remaining player once."""
    p = after(START8, *out, n=8)
    bigs = [p.big_blind]
    for _ in range(len(p.dealt_in) - 1):
        p = after(p, n=8)
        bigs.append(p.big_blind)
    assert sorted(bigs) == sorted(seats(p)) and bigs[0] == 4


# -- heads-up ------------------------------------------------------------------------------------

THREE = first_hand({2, 5, 9}, 2, 10, TDA)      # button 2, small blind 5, big blind 9


@pytest.mark.parametrize("out, button, big", [(2, 9, 5), (5, 9, 2), (9, 5, 2)],
                         ids=["button-out", "small-blind-out", "big-blind-out"])
def test_becoming_heads_up_nobody_posts_the_big_blind_twice(out, button, big):
    """000 §34, 001 'Distribution en heads-up', 003 art. 71: the button is set so that nobody is big blind
    twice in a row (button out: a plain move would make 9 big blind again); the button posts the small blind."""
    p = after(THREE, out, n=10)
    assert p.heads_up and blinds(p) == (button, button, big)
    assert p.big_blind != THREE.big_blind and p.dealt_in == (big, button)
    assert "000 §34" in p.rules and "004 C.c" in p.rules


def test_becoming_heads_up_from_a_dead_button_hand():
    """000 §32 then §34: a dead-button hand, then heads-up; the big blind still never repeats."""
    p = after(first_hand({1, 4, 6, 8}, 1, 8, TDA), 4, n=8)      # small blind out: dead button on 4
    assert blinds(p) == (4, 6, 8) and p.dealer == 1
    q = after(p, 6, n=8)
    assert q.heads_up and blinds(q) == (8, 8, 1) and q.big_blind != p.big_blind


def test_heads_up_rotation_alternates():
    """000 §34, 003 art. 71: heads-up the blinds alternate; the button is small blind and acts first preflop."""
    p = first_hand({4, 8}, 4, 10, TDA)
    seen = []
    for _ in range(4):
        seen.append(blinds(p))
        assert p.dealt_in == (p.big_blind, p.button)
        p = after(p, n=10)
    assert seen == [(4, 4, 8), (8, 8, 4), (4, 4, 8), (8, 8, 4)]


@BOTH
def test_new_player_ends_heads_up_on_his_big_blind(rules):
    """000 §32: a player seated at a heads-up table takes the big blind on his way; the others move on."""
    hu = first_hand({1, 5}, 1, 10, rules)                            # button/small blind 1, big blind 5
    p = after(hu, n=10, rules=rules, new=(7,))
    assert not p.heads_up and blinds(p) == (1, 5, 7) and p.dealt_in == (5, 7, 1)


@pytest.mark.parametrize("rules, expected", [
    (CASINO, [(5, 5, 1), (5, 1, 3)]),   # 003 art. 27: not on the button: one more heads-up hand, then his big blind
    (TDA, [(3, 5, 1), (5, 1, 3)]),      # 000 §8A: the button at once
], ids=["003", "anywhere"])
def test_new_player_behind_a_heads_up_button(rules, expected):
    """000 §32, §34: at a heads-up table (button 1, big blind 5) a player sits at 3, where the button falls."""
    p = after(first_hand({1, 5}, 1, 10, rules), n=10, rules=rules, new=(3,))
    q = after(p, n=10, rules=rules)
    assert [blinds(p), blinds(q)] == expected and p.heads_up is (rules == CASINO)
    assert q.dealt_in == (1, 3, 5) and q.big_blind != p.big_blind


# -- new players (003 art. 27; 000 §8A) ----------------------------------------------------------

def test_003_art27_new_player_in_the_small_blind_waits_until_the_button_passes():
    """003 art. 27: a new player may be neither small blind nor button; he waits "que le Bouton passe après
    lui": dead small blind, then a dead button on his seat, then he is dealt in."""
    p1 = after(START8, 3, n=8, rules=CASINO, new=(3,))                # big blind out, replaced at once
    assert blinds(p1) == (2, None, 4) and p1.waiting == (3,) and "003 art. 27" in p1.rules
    p2 = after(p1, n=8, rules=CASINO)                                 # the engine says "new" only once
    assert blinds(p2) == (3, 4, 5) and p2.waiting == (3,) and 3 not in p2.dealt_in
    p3 = after(p2, n=8, rules=CASINO)
    assert blinds(p3) == (4, 5, 6) and p3.waiting == () and p3.dealt_in[-2:] == (3, 4)


def test_new_player_in_the_small_blind_posts_it_at_once_anywhere():
    """000 §8A, 001 'Déplacement du bouton' ("qu'elle n'est pas remplacée"): the new player takes the seat's place."""
    p = after(START8, 3, n=8, rules=TDA, new=(3,))
    assert blinds(p) == (2, 3, 4) and p.waiting == () and p.dealt_in[:2] == (3, 4)


@pytest.mark.parametrize("rules, button_dealt", [(CASINO, False), (TDA, True)], ids=["003", "anywhere"])
def test_new_player_on_the_button_seat(rules, button_dealt):
    """003 art. 27: on the button he waits (the seat's button is dead, 1 deals again); 001 case 1 "n'est pas
    remplacée": anywhere else he has the button at once."""
    p = after(START8, 2, n=8, rules=rules, new=(2,))                  # small blind out, replaced at once
    assert blinds(p) == (2, 3, 4) and (2 in p.dealt_in) is button_dealt
    assert p.dealer == (2 if button_dealt else 1)
    q = after(p, n=8, rules=rules)
    assert blinds(q) == (3, 4, 5) and q.waiting == () and q.dealt_in[-1] == 3


@BOTH
def test_new_player_behind_the_button_is_dealt_in_at_once(rules):
    """003 art. 27 ("Dans ce dernier cas précis", only button and small blind), 000 §8A: elsewhere he plays."""
    p = first_hand({1, 2, 3, 4, 5, 6}, 1, 10, rules)
    q = after(p, n=10, rules=rules, new=(9,))
    assert blinds(q) == (2, 3, 4) and q.dealt_in == (3, 4, 5, 6, 9, 1, 2) and q.waiting == ()


@BOTH
def test_new_player_left_of_the_big_blind_posts_the_next_big_blind(rules):
    """000 §32, §11A, 004 K.c: the big blind advances to the next player, a new one included."""
    p = first_hand({1, 2, 3, 6, 7}, 1, 10, rules)                    # big blind 3, seats 4-5 empty
    q = after(p, n=10, rules=rules, new=(4,))
    assert blinds(q) == (2, 3, 4) and q.dealt_in[:2] == (3, 4)


@BOTH
def test_new_player_between_button_and_small_blind_waits(rules):
    """000 §8A, §10: never dealt in between the small blind and the button; once the button is past he plays."""
    p = first_hand({1, 4, 5, 6, 8}, 8, 10, rules)                    # button 8, small blind 1, big blind 4
    q = after(p, n=10, rules=rules)
    assert blinds(q) == (1, 4, 5)                                      # seats 2-3 between button and small blind
    r = after(q, n=10, rules=rules, new=(3,))                          # the button is already past seat 3
    assert blinds(r) == (4, 5, 6) and r.waiting == () and r.dealt_in[-2:] == (3, 4)
    q2 = after(p, n=10, rules=rules, new=(2,))
    assert blinds(q2) == (1, 4, 5) and q2.waiting == (2,) and "000 §8A" in q2.rules
    assert blinds(after(q2, n=10, rules=rules)) == (4, 5, 6)
    assert 2 in after(q2, n=10, rules=rules).dealt_in


# -- misdeal -------------------------------------------------------------------------------------

def test_000_35C_replay_keeps_button_blinds_and_seats():
    """000 §35C: after a misdeal the hand is replayed exactly: same button, same blinds, no new player."""
    p = after(START8, 3, n=8, rules=CASINO, new=(3,))
    r = replay_hand(p)
    assert (blinds(r), r.dealt_in, r.waiting, r.dead_small_blind) == (blinds(p), p.dealt_in, p.waiting, 3)
    assert r.rules[-1] == "000 §35C" and replay_hand(r).rules == r.rules
    assert after(r, n=8, rules=CASINO).dealt_in == after(p, n=8, rules=CASINO).dealt_in


# -- the moving button (dead_button=False, no house) ---------------------------------------------

def test_moving_button_skips_the_eliminated_small_blind():
    """004 'Nouveau tour' read alone: the three buttons move to the next players; nothing is dead."""
    p = after(START8, 2, n=8, rules=MOVING)
    assert blinds(p) == (3, 4, 5) and p.dealt_in[-1] == 3


def test_moving_button_heads_up_never_big_blind_twice():
    """003 art. 71: "si un joueur est grosse Blind, alors qu'il l'était déjà ... il devient de petite Blind"."""
    p = after(THREE, 2, n=10, rules=MOVING)
    assert p.heads_up and blinds(p) == (9, 9, 5)


# -- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: first_hand({3}, 3, 10, TDA), "at least 2 players"),
    (lambda: first_hand({1, 11}, 1, 10, TDA), "11 is not a seat of a 10-seat table"),
    (lambda: first_hand({0, 1}, 1, 10, TDA), "0 is not a seat"),
    (lambda: first_hand([1, 2, 2], 1, 10, TDA), r"\[2\] listed twice"),
    (lambda: first_hand({1, 2, 3}, 5, 10, TDA), "button seat 5 has no player"),
    (lambda: first_hand({1, 2}, 1, 1, TDA), "seat_count"),
    (lambda: first_hand({True, 2}, 2, 10, TDA), "True is not a seat"),
    (lambda: next_hand(START8, {4}, 8, TDA), "at least 2 players"),
    (lambda: next_hand(START8, {1, 2}, 8, TDA, new=(5,)), r"new seat\(s\) \[5\] have no player"),
    (lambda: next_hand(START8, {1, 2}, 2, TDA), "previous big_blind 3 is not a seat of a 2-seat table"),
])
def test_clear_errors(call, match):
    """SeatingError (a ValueError) says what is wrong: a hand needs 2 players (000 §34) on real seats."""
    with pytest.raises(SeatingError, match=match):
        call()
    assert issubclass(SeatingError, ValueError)


# -- properties ----------------------------------------------------------------------------------

N = 10
RULES = st.builds(SeatingRules, st.booleans(), st.sampled_from(["not-button-or-small-blind", "anywhere"]))


def clockwise_after(seat: int, pool: set[int]) -> int:
    return min(pool - {seat} or pool, key=lambda s: (s - seat - 1) % N)


def check(p: Positions, occupied: set[int], prev: Positions | None, new: set[int], fresh: set[int],
          rules: SeatingRules):
    dealt = p.dealt_in
    assert len(dealt) == len(set(dealt)) >= 2 and set(dealt) <= occupied
    assert set(dealt) | set(p.waiting) == occupied and not set(dealt) & set(p.waiting)
    assert p.big_blind in dealt and p.small_blind in (*dealt, None) and p.small_blind != p.big_blind
    assert list(dealt) == sorted(dealt, key=lambda s: (s - p.button - 1) % N)       # pokerkit order
    if p.heads_up:
        assert len(dealt) == 2 and dealt == (p.big_blind, p.button) and p.small_blind == p.button
    else:
        assert len(dealt) >= 3 and dealt[0] == (p.small_blind or p.big_blind)
        assert p.small_blind is None or dealt[1] == p.big_blind
        small_seat = p.small_blind or p.dead_small_blind
        assert all((s - p.button) % N >= (small_seat - p.button) % N for s in dealt if s != p.button)
    if prev is not None:
        assert p.big_blind != prev.big_blind or p.big_blind in new   # nobody twice: 000 §34, 003 art. 71
        if rules.dead_button:
            assert p.big_blind == clockwise_after(prev.big_blind, occupied)           # 000 §32
    if rules.new_player == "not-button-or-small-blind" and not p.heads_up and len(occupied - fresh) >= 2:
        assert p.small_blind not in fresh and not (p.button in fresh and p.button in dealt)   # 003 art. 27


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_property_random_eliminations_and_new_players(data):
    """000 §32, §34, 003 art. 27, 004 D.d on a 10-seat table: one big blind advancing clockwise, seats dealt
    in unique and occupied, pokerkit order; then a full orbit: everybody posts each blind exactly once."""
    rules = data.draw(RULES, "rules")
    occupied = data.draw(st.sets(st.integers(1, N), min_size=2), "seated")
    p = first_hand(occupied, data.draw(st.sampled_from(sorted(occupied)), "button"), N, rules)
    check(p, occupied, None, set(), set(), rules)
    for _ in range(data.draw(st.integers(0, 30), "hands")):
        out = data.draw(st.sets(st.sampled_from(sorted(occupied)), max_size=len(occupied) - 2), "out")
        free = sorted(set(range(1, N + 1)) - (occupied - out))
        new = data.draw(st.sets(st.sampled_from(free), max_size=3), "new") if free else set()
        occupied = (occupied - out) | new
        fresh = (new | set(p.waiting)) & occupied
        p, prev = next_hand(p, occupied, N, rules, new=sorted(new)), p
        check(p, occupied, prev, new, fresh, rules)
    for _ in range(3):                                   # new players still waiting get dealt in
        p, prev = next_hand(p, occupied, N, rules), p
        check(p, occupied, prev, set(), set(prev.waiting), rules)
    assert p.waiting == ()
    bigs, smalls = Counter(), Counter()
    for _ in range(len(occupied)):
        p = next_hand(p, occupied, N, rules)
        bigs[p.big_blind] += 1
        smalls[p.small_blind] += 1
    assert bigs == Counter(occupied) and smalls == Counter(occupied)
