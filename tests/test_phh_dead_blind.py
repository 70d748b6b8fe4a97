"""A hand with a dead small blind (004 D.a, 000 §32) through ``tablectl phh verify``.

A fresh engine cannot start such a hand: the table reaches it only after the big blind of the hand
before busted. ``phh verify`` plays that hand first (a lead-in: a phantom big blind all-in loses to a
caller and leaves), then the record's hand, and compares the record's hand only."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from pokerkit import HandHistory

from firmware_host.cli.main import main
from firmware_host.events import HandEnded, HandStarted
from firmware_host.hil.phh import PHANTOM, observations, script, verify_hand
from firmware_host.hil.replay import replay
from firmware_host.observations import SeatPresence
from firmware_host.rules.profile import builtin_profile
from firmware_host.sim.simulate import simulate
from hall.histories import dumps, finished_hands, to_phh

HOUSES = ("000", "001", "002", "003", "004")
RECORDING = Path(__file__).parent / "recordings" / "dead-button-004"
LEVEL = {"small_blind": 50, "big_blind": 100, "ante": 25, "big_blind_ante": 0}


def recorded() -> HandHistory:
    """The record the hall exports of dead-button-004's second hand: the first hand's big blind busted."""
    lines = (RECORDING / "expected-events.jsonl").read_text().splitlines()
    events = [dict(json.loads(line), session="s1") for line in lines]
    records = [to_phh(hand, "004") for hand in finished_hands(events)]
    [dead] = [r for r in records if r.user_defined_fields.get("_dead_small_blind")]
    return dead


def played(**changes) -> HandHistory:
    """Five players, an ante, no small blind: a raise, a call, a short button all-in, a showdown of three.
    The button (p5: 150) cannot call a big blind in the lead-in, so p1 does. pokerkit gives the finishing
    stacks."""
    fields = dict(
        variant="NT", ante_trimming_status=True, antes=[25] * 5, blinds_or_straddles=[100, 0, 0, 0, 0], min_bet=100,
        starting_stacks=[3000, 4000, 5000, 2000, 150],
        actions=["d dh p1 JsJd", "d dh p2 AhKh", "d dh p3 QcQd", "d dh p4 8s8d", "d dh p5 Tc9c",
                 "p2 cbr 300", "p3 cc", "p4 f", "p5 cc", "p1 f",
                 "d db 2h7hJc", "p2 cbr 500", "p3 cc", "d db 5s", "p2 cc", "p3 cc", "d db 4h", "p2 cc", "p3 cc",
                 "p2 sm AhKh", "p3 sm QcQd", "p5 sm Tc9c"],
        user_defined_fields={"_dead_small_blind": True, "_level": LEVEL, "_button": 5})
    fields.update(changes)
    hh = HandHistory(**fields)
    *_, (state, _) = hh.state_actions
    hh.finishing_stacks = list(state.stacks)
    return hh


def started(events) -> list[HandStarted]:
    return [e for e in events if isinstance(e, HandStarted)]


@pytest.mark.parametrize("house", HOUSES)
def test_the_recorded_dead_small_blind_hand_agrees_and_only_it_is_compared(house):
    hh = recorded()
    assert list(hh.blinds_or_straddles) == [100, 0, 0] and list(hh.seats) == [3, 4, 1]
    verdict = verify_hand(2, hh, builtin_profile(house))
    assert verdict.agree, verdict.detail
    [hand] = started(verdict.events)                  # the lead-in's events are not the verdict's
    assert hand.small_blind_seat is None and hand.big_blind_seat == 2 and hand.button == 4
    assert "004 D.a" in hand.rules and hand.stacks == (5000, 5000, 5100)
    assert sum(isinstance(e, HandEnded) for e in verdict.events) == 1


def test_a_wrong_finishing_stack_of_a_dead_small_blind_hand_disagrees(tmp_path, capsys):
    hh = recorded()
    good = tmp_path / "good.phhs"
    good.write_text(dumps([hh]))
    assert main(["phh", "verify", str(good)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "agree: 1/1"

    wrong = dataclasses.replace(hh, finishing_stacks=[5100, 5000, 5000])   # the big blind did not win the pot
    verdict = verify_hand(2, wrong, builtin_profile("004"))
    assert not verdict.agree and verdict.detail == "final stacks [5000, 5000, 5100], record [5100, 5000, 5000]"
    bad = tmp_path / "bad.phhs"
    bad.write_text(dumps([wrong]))
    assert main(["phh", "verify", str(bad)]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == "agree: 0/1" and "DISAGREES: final stacks" in out[0]


@pytest.mark.parametrize("house", HOUSES)
def test_a_played_dead_small_blind_hand_with_antes_agrees(house):
    hh = played()
    assert list(hh.finishing_stacks) == [2875, 5125, 4175, 1975, 0]
    verdict = verify_hand(1, hh, builtin_profile(house))
    assert verdict.agree, verdict.detail
    [hand] = started(verdict.events)
    assert hand.small_blind_seat is None and hand.ante == 25 and hand.stacks == (3000, 4000, 5000, 2000, 150)
    stacks = list(hh.finishing_stacks)
    stacks[1], stacks[2] = stacks[2], stacks[1]                             # the queens won instead
    wrong = verify_hand(1, dataclasses.replace(hh, finishing_stacks=stacks), builtin_profile(house))
    assert not wrong.agree and wrong.detail.startswith("final stacks [2875, 5125, 4175, 1975, 0]")


def test_the_lead_in_seats_a_phantom_big_blind_who_busts_and_leaves():
    hh = played()
    obs, expected = observations(hh)
    sits = [o for o in obs if isinstance(o, SeatPresence)]
    assert (sits[0].seat, sits[0].player, sits[0].stack) == (1, PHANTOM, 100)
    # p1 (seat 2) calls the lead-in for the short button: he starts it with 3000 - 100 - 50, the button 150 + 50
    assert [(s.seat, s.stack) for s in sits[1:6]] == [(2, 2850), (3, 4000), (4, 5000), (5, 2000), (6, 200)]
    assert (sits[-1].seat, sits[-1].present) == (1, False)
    assert [(e.seat, e.action, e.total) for e in expected][:5] == [
        (3, "raise", 300), (4, "call", 300), (5, "fold", 0), (6, "call", 125), (2, "fold", 0)]
    lines = script(hh).splitlines()
    lead = lines[: lines.index("leave 1") + 1]
    assert lead[:8] == ["seat 1 phantom 100", "seat 2 p1 2850", "seat 3 p2 4000", "seat 4 p3 5000",
                        "seat 5 p4 2000", "seat 6 p5 200", "level 50 100", "button 5"]
    assert lead[8] == "hand 6:50 1:100" and "push 2 100" in lead and "fold 6" in lead
    assert lines[len(lead):len(lead) + 2] == ["level 50 100 ante 25", "hand 2:100"]


@pytest.mark.parametrize("make", [recorded, played], ids=["recorded", "played"])
def test_the_script_plays_the_lead_in_then_the_dead_small_blind_hand(make):
    """``script()`` is the same hand for the simulator: through a recording and its replay, the second
    hand has no small blind (004 D.a) and ends with the record's stacks."""
    hh = make()
    events = replay(simulate("profile 004\n" + script(hh)))
    assert not [e for e in events if e.KIND == "irregularity"]
    lead, hand = started(events)
    assert lead.big_blind_seat == 1 and hand.small_blind_seat is None and hand.big_blind_seat == 2
    ended = [e for e in events if isinstance(e, HandEnded)][-1]
    assert list(ended.seats) == list(range(2, len(hh.starting_stacks) + 2))
    assert list(ended.stacks) == list(hh.finishing_stacks)


def test_a_dead_small_blind_the_table_cannot_reach_says_why():
    heads_up = HandHistory(
        variant="NT", ante_trimming_status=True, antes=[0, 0], blinds_or_straddles=[100, 0], min_bet=100,
        starting_stacks=[1000, 1000], actions=["d dh p1 AsAd", "d dh p2 KsKd", "p2 f"],
        finishing_stacks=[1000, 1000], user_defined_fields={"_dead_small_blind": True})
    verdict = verify_hand(1, heads_up, builtin_profile("000"))
    assert not verdict.agree and verdict.detail.startswith("cannot replay: a dead small blind (004 D.a, 000 §32)")
    assert "000 §34" in verdict.detail
    broke = played(starting_stacks=[150, 150, 150, 150, 150], actions=["d dh p1 JsJd", "d dh p2 AhKh",
                   "d dh p3 QcQd", "d dh p4 8s8d", "d dh p5 Tc9c", "p2 f", "p3 f", "p4 f", "p5 f"])
    verdict = verify_hand(1, broke, builtin_profile("000"))
    assert not verdict.agree and "nobody has the chips to call the big blind 100" in verdict.detail
    full = played(starting_stacks=[3000, 4000, 5000, 2000, 150, 1000, 1000, 1000], antes=[25] * 8,
                  blinds_or_straddles=[100] + [0] * 7,
                  actions=[f"d dh p{i + 1} {c}" for i, c in enumerate(
                      ["JsJd", "AhKh", "QcQd", "8s8d", "Tc9c", "2s2d", "3s3d", "4s4d"])] + [
                      f"p{i} f" for i in range(2, 9)])
    verdict = verify_hand(1, full, builtin_profile("004"))              # 004: eight seats ('Préparation')
    assert not verdict.agree and verdict.detail.endswith("8 players and him need 9 seats, the 004 table has 8")
    assert verify_hand(1, full, builtin_profile("000")).agree            # 000: ten
