"""The one postponement queue, and the floor's decisions on a hold."""
import pytest

from firmware_host.observations import CardEntered, ChipsInZone, ConsolePress
from firmware_host.rules import irregularities
from firmware_host.rules.holds import _EFFECTS, VOIDING, Hold, Postponed, Until, random_pick


def chips(t, seat, amount=100):
    return ChipsInZone(float(t), f"bet:{seat}", amount)


def test_postponed_observations_come_back_in_the_order_they_came():
    waiting = Postponed()
    first, second = chips(1, 3), CardEntered(2.0, "muck", "As")
    assert not waiting
    assert waiting.add(first, Until.RULING) == 1
    assert waiting.add(second, Until.RULING) == 2
    assert waiting and waiting.waits(Until.RULING)
    assert waiting.take(Until.RULING) == [first, second]
    assert not waiting and waiting.take(Until.RULING) == []


def test_each_observation_waits_for_its_own_event():
    waiting = Postponed()
    held, turn, deal = chips(1, 2), chips(2, 4), chips(3, 5)
    waiting.add(held, Until.RULING)
    waiting.add(turn, Until.TURN, seat=4)
    assert waiting.add(deal, Until.DEAL_END) == 1          # the count is per reason
    assert waiting.take(Until.TURN, seat=2) == []          # another seat's turn releases nothing
    assert waiting.take(Until.DEAL_END) == [deal]
    assert waiting.take(Until.TURN, seat=4) == [turn]
    assert waiting.take(Until.RULING) == [held]


def test_a_seat_waits_for_its_turn_with_its_latest_action_only():
    waiting = Postponed()
    waiting.add(chips(1, 4, 100), Until.TURN, seat=4)
    waiting.add(chips(2, 5, 100), Until.TURN, seat=5)
    latest = chips(3, 4, 300)
    waiting.add(latest, Until.TURN, seat=4)
    assert waiting.take(Until.TURN, seat=4) == [latest]
    assert waiting.waits(Until.TURN, seat=5)


def test_the_end_of_a_hand_drops_what_waited_for_it_not_what_waits_for_the_floor():
    waiting = Postponed()
    press = ConsolePress(1.0, "new-hand")
    waiting.add(press, Until.RULING)
    waiting.add(chips(2, 4), Until.TURN, seat=4)
    waiting.add(chips(3, 5), Until.DEAL_END)
    waiting.drop(Until.TURN, Until.DEAL_END)
    assert not waiting.waits(Until.TURN, seat=4) and not waiting.waits(Until.DEAL_END)
    assert waiting.take(Until.RULING) == [press]


def test_every_resolution_the_catalogue_offers_has_an_effect():
    offered = {option for kind in irregularities.KINDS for entry in irregularities._CATALOGUE[kind].values()
               for option in entry[3]}
    assert offered == set(_EFFECTS) | VOIDING


@pytest.mark.parametrize("seed", ["t1:3:40:7c8c9cTc", "demo-1:1:17:2c3c4c5c"])
def test_the_floors_random_pick_is_one_of_the_four_and_reproducible(seed):
    hold = Hold("four-card-flop", "000 §39", ("random-burn",), (), ("7c", "8c", "9c", "Tc"))
    pick = random_pick(hold, seed)
    assert pick in hold.cards and random_pick(hold, seed) == pick
