"""The public view: what the public topics may carry of the hand, built from the engine's events.

Pure. Every card not yet public is masked (``XX``): hole cards stay masked until
shown, and a secret event (a burn card, a hole card) has no public body at all.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from firmware_host.events import (
    ActionTaken,
    BoardDealt,
    Event,
    HandEnded,
    HandShown,
    HandStarted,
    IrregularityResolved,
    PotAwarded,
)
from firmware_host.mqtt.contract import CARD_RE, MASK, JsonObject

MASKED_FIELDS = ("cards", "procedure", "procedure_fr", "effect", "rank", "text")
"""Fields of a public event body that may name cards (masked unless the event makes them public)."""


def mask_text(text: str, public: set[str]) -> str:
    """*text* with every card it names that is not in *public* masked."""
    return CARD_RE.sub(lambda m: m.group(0) if m.group(0) in public else MASK, text)


def mask_cards(cards: Iterable[str], public: set[str]) -> tuple[str, ...]:
    """*cards* with every card not in *public* masked."""
    return tuple(c if c in public else MASK for c in cards)


class PublicView:
    """The hand as the public sees it, from the events; masks every card not yet public. Pure.

    ``state`` is the body of the retained ``state`` topic.
    """

    def __init__(self) -> None:
        self.public_cards: set[str] = set()
        self.state: JsonObject = {"hand": 0, "in_hand": False, "last_seq": 0}

    def apply(self, event: Event) -> JsonObject | None:
        """Update the view; return the public body of *event* (None: secret, secure topic only)."""
        self._update(event)
        if event.SECRET:
            return None
        return self._public_body(event)

    def _update(self, event: Event) -> None:
        s = self.state
        s["last_seq"] = event.seq
        match event:
            case HandStarted():
                self.public_cards = set()
                s.update(hand=event.hand, in_hand=True, button=event.button, street="preflop",
                         blinds=[event.small_blind, event.big_blind], ante=event.ante or event.big_blind_ante,
                         board=[], shown={}, folded=[],
                         stacks={str(seat): st - p for seat, st, p in zip(event.seats, event.stacks, event.posted)},
                         bets={str(seat): p for seat, p in zip(event.seats, event.posted)}, pot=0)
            case ActionTaken():
                s["street"] = event.street
                seat = str(event.seat)
                if "stacks" in s:
                    s["stacks"][seat] = s["stacks"].get(seat, 0) - event.added + event.returned
                    s["bets"][seat] = event.total
                if event.action == "fold":
                    s.setdefault("folded", []).append(event.seat)
            case BoardDealt():
                self.public_cards.update(event.cards)
                s["street"] = event.street
                s["pot"] = s.get("pot", 0) + sum(s.get("bets", {}).values())
                s["bets"] = {k: 0 for k in s.get("bets", {})}
                s.setdefault("board", []).extend(event.cards)
            case IrregularityResolved() if event.board:     # the board the floor's ruling left (public)
                self.public_cards.update(event.board)
                s["board"] = list(event.board)
            case HandShown():
                self.public_cards.update(event.cards)
                s.setdefault("shown", {})[str(event.seat)] = list(event.cards)
            case PotAwarded():
                s["pot"] = 0
                s["bets"] = {k: 0 for k in s.get("bets", {})}
            case HandEnded():
                s.update(in_hand=False, stacks={str(a): b for a, b in zip(event.seats, event.stacks)},
                         voided=event.voided, bets={})

    def _public_body(self, event: Event) -> JsonObject:
        """*event*'s body with the cards not yet public masked (a shown hand and the board are public)."""
        body = event.to_dict()
        if isinstance(event, (HandShown, BoardDealt)):
            return body
        for key in MASKED_FIELDS:
            if key in body:
                body[key] = _masked(body[key], self.public_cards)
        return body


def _masked(value: Any, public: set[str]) -> Any:
    """A body field masked: a text stays a text, cards become a list (JSON)."""
    if isinstance(value, str):
        return mask_text(value, public)
    return list(mask_cards(value, public))
