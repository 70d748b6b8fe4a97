"""Hardware in the loop: every recording of the corpus replayed through the drivers into the engine.

The events must equal the committed ``expected-events.jsonl`` (a changed expectation shows as a
diff), each scenario's ``# expect:`` lines must hold, and the Pluribus sessions must end every
hand with the record's stacks. Rebuild with ``python tests/build_corpus.py`` and review the diff.
"""
import difflib
import json
from pathlib import Path

import pytest

from firmware_host.events import (
    BoardDealt,
    HandEnded,
    HandShown,
    HandStarted,
    Irregularity,
    IrregularityResolved,
    Notice,
    PotAwarded,
)
from firmware_host.hil.recording import load
from firmware_host.hil.replay import Replay
from firmware_host.sim.simulate import simulate

HERE = Path(__file__).parent
RECORDINGS = sorted(p.parent for p in (HERE / "recordings").glob("*/recording.json"))
SCENARIOS = sorted((HERE / "scenarios").glob("*.txt"))


def run(path, speed=None):
    with Replay(load(path)) as replay:
        return replay.run(speed=speed)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_replay_gives_the_expected_events(path):
    got = [e.to_json() for e in run(path)]
    want = (path / "expected-events.jsonl").read_text().splitlines()
    if got != want:
        diff = "\n".join(difflib.unified_diff(want, got, "expected", "replayed", lineterm="", n=1))
        pytest.fail(f"{path.name}: the events changed:\n{diff[:6000]}")


def test_the_corpus_has_every_scenario_and_300_real_hands():
    names = {p.name for p in RECORDINGS}
    assert {s.stem for s in SCENARIOS} <= names
    assert sum(len(json.loads((p / "record.json").read_text())["hands"]) for p in RECORDINGS
               if (p / "record.json").exists()) == 300


def test_the_recording_is_what_the_script_makes():
    for script in SCENARIOS:
        recording = simulate(script.read_text())
        assert recording.lines == load(HERE / "recordings" / script.stem).lines, script.name


def _holds(expect: str, events) -> bool:
    words = expect.split()
    kind, args = words[0], words[1:]
    if kind == "irregularity":
        return any(isinstance(e, Irregularity) and e.irregularity == args[0] and e.rule == " ".join(args[1:])
                   for e in events)
    if kind == "resolved":
        return any(isinstance(e, IrregularityResolved) and e.decision == args[0] for e in events)
    if kind == "replay":
        return any(isinstance(e, HandStarted) and e.replay for e in events)
    if kind == "irregularities":
        return sum(isinstance(e, Irregularity) for e in events) == int(args[0])
    if kind == "void":
        return any(isinstance(e, HandEnded) and e.voided for e in events)
    if kind == "pot":
        return any(isinstance(e, PotAwarded) and int(args[0]) in e.winners for e in events)
    if kind == "award":                  # a pot's shares, winners in position order
        return any(isinstance(e, PotAwarded) and e.amounts == tuple(map(int, args)) for e in events)
    if kind == "burned":                 # burned STREET CARD
        return any(e.KIND == "card-burned" and (e.street, e.card) == (args[0], args[1]) for e in events)
    if kind == "board":                  # board CARDS: a hand's whole board, as dealt (after any ruling)
        return args[0] in _boards(events)
    if kind == "shown":
        return any(isinstance(e, HandShown) and e.seat == int(args[0]) for e in events)
    if kind == "action":
        return any(e.KIND == "action" and (e.seat, e.action, e.total) == (int(args[0]), args[1], int(args[2]))
                   for e in events)
    if kind == "fault":
        return any(isinstance(e, Irregularity) and e.irregularity == f"device-fault:{args[0]}" for e in events)
    if kind == "recovered":
        return any(isinstance(e, Notice) and e.notice == "device-recovered" and e.text.startswith(args[0])
                   for e in events)
    if kind == "started":
        hand = int(args[0])
        started = [e for e in events if isinstance(e, HandStarted) and e.hand == hand][0]
        checks = dict(zip(args[1::2], args[2::2]))
        return all(str({"button": started.button, "bb": started.big_blind_seat,
                        "sb": started.small_blind_seat if started.small_blind_seat else "none"}[k]) == v
                   for k, v in checks.items())
    raise AssertionError(f"unknown expectation {expect!r}")


def _boards(events) -> set[str]:
    """Each hand's board, from its BoardDealt events and the rulings that corrected it."""
    boards: dict[int, list[str]] = {}
    for e in events:
        if isinstance(e, BoardDealt):
            boards.setdefault(e.hand, []).extend(e.cards)
        elif isinstance(e, IrregularityResolved) and e.board:
            boards[e.hand] = list(e.board)
    return {"".join(cards) for cards in boards.values()}


@pytest.mark.parametrize("script", SCENARIOS, ids=lambda p: p.stem)
def test_scenario_expectations_hold(script):
    expects = [line.split("expect:", 1)[1].strip() for line in script.read_text().splitlines()
               if line.startswith("# expect:")]
    assert expects, f"{script.name} states no expectation"
    events = run(HERE / "recordings" / script.stem)
    for expect in expects:
        assert _holds(expect, events), f"{script.name}: '{expect}' does not hold"


@pytest.mark.parametrize("path", [p for p in RECORDINGS if p.name.startswith("pluribus")], ids=lambda p: p.name)
def test_pluribus_sessions_end_every_hand_as_recorded(path):
    record = json.loads((path / "record.json").read_text())
    events = run(path)
    ended = [e for e in events if isinstance(e, HandEnded)]
    assert len(ended) == len(record["hands"])
    for end, stacks in zip(ended, record["finishing_stacks"]):
        final = dict(zip(end.seats, end.stacks))
        got = [final[s] for s in range(1, len(stacks) + 1)]
        assert all(abs(a - b) <= 1 for a, b in zip(got, stacks)), (end.hand, got, stacks)   # 000 §20: odd chips
    assert not [e for e in events if isinstance(e, Irregularity)]


def test_replay_is_the_same_at_any_speed():
    path = HERE / "recordings" / "fault-silent-shoe"
    fast = [e.to_json() for e in run(path)]
    timed = [e.to_json() for e in run(path, speed=400)]
    assert fast == timed


def test_script_verbs_for_a_dealers_corrections_make_the_observations_the_hardware_would():
    """Issue 13 item 9: `handback` (chips given back from a bet zone: the camera's count falls) and
    `restub` (a card taken off a zone and put back on the stub: its reader loses it; it is drawn again)."""
    from firmware_host.observations import CardEntered, CardLeft, ChipsInZone

    text = ("profile 000\nseat 1 Ana 10000\nseat 2 Bob 10000\nseat 3 Chloe 10000\nlevel 50 100\nbutton 3\n"
            "hand 1:50 2:100\ndeal 1:AsAd 2:KsKd 3:QsQd\npush 3 500 100x2\nhandback 3 500\n"
            "draw 7c\nto board:flop 7c\nrestub board:flop 7c\ndraw 7c\nto board:flop 7c\n")
    with Replay(simulate(text)) as replay:
        observations = list(replay.stream(None))
    counts = [o.amount for o in observations if isinstance(o, ChipsInZone) and o.zone == "bet:3"]
    assert counts[-2:] == [700, 200]
    path = [(type(o).__name__, getattr(o, "zone", "")) for o in observations
            if isinstance(o, (CardEntered, CardLeft)) and getattr(o, "card", "") == "7c"]
    assert path == [("CardEntered", "shoe"), ("CardEntered", "board:flop"), ("CardLeft", "board:flop"),
                    ("CardEntered", "shoe"), ("CardEntered", "board:flop")]
