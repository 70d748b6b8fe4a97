"""One readable line per event, for the console and the demo."""
from __future__ import annotations

from firmware_host.events import (
    ActionTaken,
    BoardDealt,
    CardBurned,
    Event,
    HandEnded,
    HandShown,
    HandStarted,
    HoleCardDealt,
    Irregularity,
    IrregularityResolved,
    Notice,
    PotAwarded,
)


def describe(event: Event, *, show_secrets: bool = False) -> str:
    """A short line a TD reads at a glance. Secret cards are masked unless *show_secrets*."""
    head = f"#{event.seq:<4} hand {event.hand:<3} "
    match event:
        case HandStarted():
            blinds = f"{event.small_blind}/{event.big_blind}"
            if event.ante or event.big_blind_ante:
                blinds += f" ante {event.ante or event.big_blind_ante}{' (BB)' if event.big_blind_ante else ''}"
            sb = event.small_blind_seat if event.small_blind_seat is not None else "dead"
            return (head + f"NEW HAND{' (replay)' if event.replay else ''}  button {event.button}  "
                    f"SB {sb}  BB {event.big_blind_seat}  blinds {blinds}  seats "
                    + " ".join(f"{s}:{st}" for s, st in zip(event.seats, event.stacks)))
        case HoleCardDealt():
            return head + f"seat {event.seat} dealt {event.card if show_secrets else '[hidden]'}"
        case CardBurned():
            return head + f"burn before the {event.street} {event.card if show_secrets else '[hidden]'}"
        case ActionTaken():
            text = f"seat {event.seat} {event.action.upper()}"
            if event.action in ("call", "bet", "raise"):
                text += f" {event.total}" + (" ALL-IN" if event.all_in else "")
            if event.returned:
                text += f" (return {event.returned})"
            if event.owed:
                text += f" (must add {event.owed})"
            if event.rule and event.action not in ("fold", "check"):
                text += f"  [{event.rule}]"
            return head + f"{event.street:<8} " + text
        case BoardDealt():
            return head + f"{event.street.upper()} " + " ".join(event.cards)
        case HandShown():
            return head + f"seat {event.seat} shows {' '.join(event.cards)}  {event.rank}"
        case PotAwarded():
            name = "main pot" if event.pot == 0 else f"side pot {event.pot}"
            won = ", ".join(f"seat {s} +{a}" for s, a in zip(event.winners, event.amounts))
            rank = f"  ({event.ranks[0]})" if event.ranks and event.ranks[0] else ""
            return head + f"{name} {event.amount}: {won}{rank}" + (
                f"  {event.carried} carried to the next pot" if event.carried else "")
        case HandEnded():
            state = "VOID" if event.voided else "END"
            return head + f"{state}  " + " ".join(f"{s}:{st}" for s, st in zip(event.seats, event.stacks))
        case Irregularity():
            rule = f" [{event.rule}]" if event.rule else ""
            hold = "  -- HAND ON HOLD: " + " / ".join(event.options) if event.needs_floor else ""
            return head + f"!! {event.irregularity}{rule}: {event.procedure}{hold}"
        case IrregularityResolved():
            board = f"  -- BOARD NOW {' '.join(event.board)}" if event.board else ""
            return head + f"ok {event.irregularity} resolved by {event.by} ({event.decision}): {event.effect}{board}"
        case Notice():
            rule = f" [{event.rule}]" if event.rule else ""
            return head + f"-- {event.notice}{rule}: {event.text}"
    return head + event.to_json()
