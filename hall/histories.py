"""Finished hands from a table's events, and each as a PHH record (pokerkit's :class:`HandHistory`).

Pure: events (``pokertable.event`` bodies, the secure tree's: hole and burn cards included) in, hands
and hand histories out. PHH lists players by position: p1 is the first seat dealt in after the button
(the small blind; heads-up, the big blind) and the last is the button. What PHH has no field for is kept
in user-defined fields (``_`` first): the table, its house profile, the seats, the level, the burn
cards, every irregularity with its rule and resolution, the notices, and ``_voided`` for a hand the
TD voided (its bets were returned: it is not replayed by ``tablectl phh verify``).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pokerkit import HandHistory

STREETS = ("flop", "turn", "river")
Body = dict[str, Any]


@dataclass
class Hand:
    """One finished hand of a table: its events (the last deal's, after a misdeal) and every irregularity
    and notice of all its deals."""

    table: str
    session: str
    number: int
    events: list[Body] = field(default_factory=list)
    irregular: list[Body] = field(default_factory=list)

    @property
    def started(self) -> Body:
        return next(e for e in self.events if e["kind"] == "hand-started")

    @property
    def ended(self) -> Body:
        return next(e for e in reversed(self.events) if e["kind"] == "hand-ended")

    @property
    def voided(self) -> bool:
        return bool(self.ended.get("voided"))


def finished_hands(events: Iterable[Body]) -> list[Hand]:
    """The hands of *events* (one table's, in order, each with its ``session``) that ended. A deal that ended
    voided (a misdeal, a deck-integrity stop, the TD) is a hand of its own; a hand started again without
    an end keeps its last deal and the irregularities of every deal."""
    hands: list[Hand] = []
    current: Hand | None = None
    for e in events:
        kind = e["kind"]
        if kind == "hand-started":
            same = current is not None and (current.session, current.number) == (e["session"], e["hand"])
            if not same:
                current = Hand(e["table"], e["session"], e["hand"])
            assert current is not None
            current.events = [e]
            continue
        if current is None or (current.session, current.number) != (e.get("session"), e["hand"]):
            continue      # between hands (a notice, a card read before the deal): no hand to keep it
        current.events.append(e)
        if kind in ("irregularity", "irregularity-resolved", "notice"):
            current.irregular.append(e)
        if kind == "hand-ended":
            hands.append(current)
            current = None
    return hands


def positions(started: Body) -> list[int]:
    """The seats dealt in, in PHH position order: from the first after the button round to the button.

    >>> positions({"seats": [1, 2, 3, 4], "button": 2})
    [3, 4, 1, 2]
    """
    seats = sorted(started["seats"])
    after = [s for s in seats if s > started["button"]]
    return after + [s for s in seats if s not in after]


def to_phh(hand: Hand, house: str | None = None, chip_unit: int | None = None) -> HandHistory:
    """*hand* as a PHH record; *house* is the table's house-rules profile (``_house``), *chip_unit* its
    smallest chip in play (``_chip_unit``: the odd chips of a split are whole chips of it)."""
    start = hand.started
    order = positions(start)
    index = {seat: i for i, seat in enumerate(order)}
    stack_of = dict(zip(start["seats"], start["stacks"]))
    blinds = [start["small_blind"] if s == start["small_blind_seat"] else
              start["big_blind"] if s == start["big_blind_seat"] else 0 for s in order]
    antes = [start["ante"] for _ in order]
    if start["big_blind_ante"]:
        antes[index[start["big_blind_seat"]]] = start["big_blind_ante"]
    table = {"variant": "NT", "ante_trimming_status": True, "antes": antes, "blinds_or_straddles": blinds,
             "min_bet": start["big_blind"], "starting_stacks": [stack_of[s] for s in order]}
    actions, burns = _actions(hand, index, table)
    ended = hand.ended
    final = dict(zip(ended["seats"], ended["stacks"]))
    user: dict[str, Any] = {
        "_table": hand.table, "_session": hand.session, "_button": start["button"],
        "_level": {"small_blind": start["small_blind"], "big_blind": start["big_blind"], "ante": start["ante"],
                   "big_blind_ante": start["big_blind_ante"]},
        "_burns": burns, "_irregularities": _irregularities(hand), "_notices": _notices(hand),
        "_voided": hand.voided,
    }
    if house:
        user["_house"] = house
    if chip_unit:
        user["_chip_unit"] = chip_unit
    if start.get("small_blind_seat") is None:
        user["_dead_small_blind"] = True
    return HandHistory(
        **table, actions=actions, hand=hand.number, seats=order, finishing_stacks=[final.get(s, 0) for s in order],
        user_defined_fields=user)


def _actions(hand: Hand, index: dict[int, int], table: Body) -> tuple[list[str], list[dict[str, str]]]:
    """PHH actions (``d dh``, ``d db``, ``pN f|cc|cbr|sm``) and the burn cards, from the hand's events.

    A hand killed out of turn (a third card after substantial action: 000 §38, 003 art. 78) folds where it
    would next have acted: PHH has no out-of-turn fold, and its chips stay in the pot either way."""
    holes: dict[int, list[str]] = {}
    board: dict[str, list[str]] = {}
    out: list[str | tuple[str, str]] = []      # a street's place is kept: its cards may change (a ruling)
    burns: list[dict[str, str]] = []
    dealt = False
    killed: list[int] = []                     # positions whose hand is dead, folding at their next turn
    seats_of: dict[str, list[int]] = {}        # an irregularity's seats, for its resolution

    def texts() -> list[str]:
        return [a if isinstance(a, str) else f"d db {''.join(board[a[1]])}" for a in out]

    def fold_killed() -> None:
        while killed:
            actor = _actor(table, texts())
            if actor not in killed:
                return
            killed.remove(actor)
            out.append(f"p{actor + 1} f")

    for e in hand.events:
        kind = e["kind"]
        if killed and kind in ("action", "board-dealt", "hand-shown"):
            fold_killed()
        if kind == "irregularity":
            seats_of[e["irregularity"]] = list(e["seats"])
        elif kind == "irregularity-resolved" and e["decision"] == "dead-hand":
            killed += [index[s] for s in seats_of.get(e["irregularity"], ()) if s in index]
        if kind == "hole-card-dealt":
            holes.setdefault(e["seat"], []).append(e["card"])
            continue
        if not dealt and kind in ("action", "board-dealt", "hand-shown"):
            dealt = True
            out += [f"d dh p{index[s] + 1} {''.join(holes[s][-2:])}" for s in sorted(holes, key=index.__getitem__)
                    if s in index]
        if kind == "card-burned":
            burns.append({"street": e["street"], "card": e["card"]})
        elif kind == "board-dealt":
            if e["street"] not in board:
                out.append(("board", e["street"]))
            board[e["street"]] = list(e["cards"])
        elif kind == "irregularity-resolved" and e.get("board"):
            cards = list(e["board"])
            for street, (a, b) in zip(STREETS, ((0, 3), (3, 4), (4, 5))):
                if cards[a:b]:
                    if street not in board:
                        out.append(("board", street))
                    board[street] = cards[a:b]
        elif kind == "action":
            verb = {"fold": "f", "check": "cc", "call": "cc"}.get(e["action"], f"cbr {e['total']}")
            out.append(f"p{index[e['seat']] + 1} {verb}")
        elif kind == "hand-shown":
            out.append(f"p{index[e['seat']] + 1} sm {''.join(e['cards'])}")
    if not dealt:
        deal: list[str | tuple[str, str]] = [f"d dh p{index[s] + 1} {''.join(holes[s][-2:])}"
                                             for s in sorted(holes, key=index.__getitem__) if s in index]
        out[:0] = deal
    fold_killed()
    return texts(), burns


def _actor(table: Body, actions: list[str]) -> int | None:
    """Whose turn it is (a position from 0) after *actions*, by pokerkit; None when nobody's."""
    last = deque(HandHistory(actions=actions, **table).state_actions, maxlen=1)
    return last[0][0].actor_index if last else None


def _irregularities(hand: Hand) -> list[dict[str, Any]]:
    """Each irregularity with its rule, procedure and the resolution that followed it (if any)."""
    out: list[dict[str, Any]] = []
    for e in hand.irregular:
        if e["kind"] == "irregularity":
            out.append({"kind": e["irregularity"], "rule": e["rule"], "seats": list(e["seats"]),
                        "cards": list(e.get("cards", ())), "procedure": e["procedure"],
                        "procedure_fr": e.get("procedure_fr", ""), "needs_floor": bool(e.get("needs_floor")),
                        "event_seq": e["seq"]})
        elif e["kind"] == "irregularity-resolved":
            open_ = [i for i in out if i["kind"] == e["irregularity"] and "resolution" not in i]
            resolution = {"by": e["by"], "decision": e["decision"], "effect": e["effect"], "event_seq": e["seq"]}
            if open_:
                open_[-1]["resolution"] = resolution
            else:
                out.append({"kind": e["irregularity"], "rule": e["rule"], "resolution": resolution})
    return out


def _notices(hand: Hand) -> list[dict[str, Any]]:
    return [{"notice": e["notice"], "text": e["text"], "rule": e.get("rule", ""), "event_seq": e["seq"]}
            for e in hand.irregular if e["kind"] == "notice"]


def dumps(histories: Sequence[HandHistory]) -> str:
    """Hand histories as one ``.phhs`` text (``[1]``, ``[2]``... sections)."""
    return HandHistory.dumps_all(histories) + "\n"
