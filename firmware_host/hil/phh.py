"""Real hands (PHH) as the table's hardware would see them, and their verification.

A PHH hand lists players by position (small blind first) and has no burn
cards. :func:`observations` turns one into what the table sees: seats and
stacks, the level, the button, shoe draws and zone reads (round-robin deal,
a burn before each street), chips pushed into the bet zones, folds to the
muck, checks confirmed on the console. :func:`verify` runs them through a
fresh :class:`~firmware_host.rules.engine.HandEngine` and compares the outcome
with the record's ``finishing_stacks``.
"""
from __future__ import annotations

import gzip
import io
import math
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pokerkit import HandHistory

from firmware_host.events import ActionTaken, Event, HandEnded, PotAwarded
from firmware_host.observations import (
    DECK,
    CardEntered,
    ChipsInZone,
    ConsolePress,
    MoveButton,
    Observation,
    SeatPresence,
    SetLevel,
)
from firmware_host.rules.chips import breakdown
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import Profile

PHH_CHIPS = (1, 5, 25, 100, 500, 1000, 5000, 25000)
"""The chip set used to push PHH amounts (PHH has none); 1 is the smallest chip in play."""

STREET_NAMES = ("flop", "turn", "river")


class PhhError(ValueError):
    """A hand the table cannot replay (unknown cards, straddles, another variant...)."""


@dataclass(frozen=True)
class Expected:
    """One action of the record, as the engine should report it."""

    seat: int
    action: str
    total: int


def load(path: str | Path) -> list[HandHistory]:
    """Every hand of a ``.phh`` or ``.phhs`` file (optionally ``.gz``), through pokerkit's parser.

    :raises PhhError: the file cannot be read, is a damaged ``.gz`` (a power cut's truncation, a flipped
        bit) or is not PHH; the message names the file.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
        fp = io.BytesIO(gzip.decompress(data) if name.endswith(".gz") else data)
        if name.removesuffix(".gz").endswith(".phhs"):
            return list(HandHistory.load_all(fp))
        return [HandHistory.load(fp)]
    except OSError as exc:  # gzip.BadGzipFile is one
        raise PhhError(f"{name}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise PhhError(f"{name}: damaged compressed file: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:  # tomllib's TOMLDecodeError is a ValueError
        raise PhhError(f"{name}: not a PHH file: {exc}") from None


def _cards(text: str) -> list[str]:
    cards = [text[i:i + 2] for i in range(0, len(text), 2)]
    for card in cards:
        if card not in DECK:
            raise PhhError(f"card {card!r} is unknown: every card must be known to be read by the table")
    return cards


def chip_unit(hh: HandHistory) -> int:
    """The smallest chip in play of hand *hh*: its ``_chip_unit`` field (a table's hand history, exported by
    the hall), else 1 (PHH itself has no chips)."""
    unit = hh.user_defined_fields.get("_chip_unit", 1)
    if not isinstance(unit, int) or unit < 1:
        raise PhhError(f"_chip_unit {unit!r} must be a whole number of at least 1")
    return unit


def _chip_set(unit: int) -> tuple[int, ...]:
    """The chips pushed when the smallest in play is *unit*."""
    return tuple(sorted({unit} | {c for c in PHH_CHIPS if c >= unit and c % unit == 0}))


def _chips(amount: int, split: bool, chips: tuple[int, ...] = PHH_CHIPS) -> tuple[tuple[int, int], ...]:
    """Chips for *amount*; with *split*, never a single chip (a silent raise, 000 §44) when a smaller exists."""
    try:
        pairs = breakdown(amount, chips)
    except ValueError as exc:
        raise PhhError(f"{exc}: not a whole number of the hand's smallest chip (_chip_unit)") from None
    if split and len(pairs) == 1 and pairs[0][1] == 1 and amount > chips[0]:
        value = pairs[0][0]
        smaller = max(v for v in chips if v < value)
        pairs = breakdown(value - smaller, chips) + ((smaller, 1),)
        pairs = tuple(sorted(_merge(pairs).items(), reverse=True))
    return pairs


def _merge(*groups: Iterable[tuple[int, int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for group in groups:
        for value, count in group:
            counts[value] = counts.get(value, 0) + count
    return counts


@dataclass
class _Table:
    """The converter's own bookkeeping of bets and stacks (to know calls, checks, all-ins)."""

    stacks: list[int]
    bets: list[int]
    zones: list[dict[int, int]] = field(default_factory=list)
    live: list[bool] = field(default_factory=list)
    chips: tuple[int, ...] = PHH_CHIPS


def observations(hh: HandHistory) -> tuple[list[Observation], list[Expected]]:
    """The observations the table would make of hand *hh*, and the actions it should report."""
    obs, expected, _ = _convert(hh)
    return obs, expected


def script(hh: HandHistory) -> str:
    """Hand *hh* as a table script for the simulator (docs/scenarios.md)."""
    return "\n".join(_convert(hh)[2]) + "\n"


def _convert(hh: HandHistory) -> tuple[list[Observation], list[Expected], list[str]]:
    if hh.variant != "NT":
        raise PhhError(f"variant {hh.variant!r}: the table plays No-Limit Texas Hold'em ('NT') only")
    n = len(hh.starting_stacks)
    if hh.blinds_or_straddles is None:
        raise PhhError("the hand has no blinds")
    blinds = list(hh.blinds_or_straddles)
    if hh.user_defined_fields.get("_dead_small_blind"):
        raise PhhError("a dead small blind (004 D.a, 000 §32) needs the hand before it: a fresh engine "
                       "would put the small blind on the first player after the button")
    if any(blinds[2:]) or (n > 2 and blinds[:2] != sorted(blinds[:2])):
        raise PhhError("straddles are not played at this table")
    antes = list(hh.antes)
    ante = bb_ante = 0
    if any(antes):
        if len(set(antes)) == 1:
            ante = antes[0]
        elif sum(1 for a in antes if a) == 1 and antes[1 if n > 2 else 0]:
            bb_ante = max(antes)
        else:
            raise PhhError(f"antes {antes} are neither uniform nor a big-blind ante")
    sb, bb = (blinds[0], blinds[1]) if n > 2 else (min(blinds[:2]), max(blinds[:2]))
    seats = list(range(1, n + 1))                     # PHH position i sits in seat i+1; button = seat n
    obs: list[Observation] = []
    lines: list[str] = []
    say = lines.append
    t = 0.0

    def add(o_type: Callable[..., Observation], *args: Any, **kwargs: Any) -> None:
        nonlocal t
        t += 1.0
        obs.append(o_type(t, *args, **kwargs))

    players: list[str | None] = list(hh.players) if hh.players else [None] * n
    names = [(p or f"p{i + 1}").replace(" ", "_") for i, p in enumerate(players)]
    for i, seat in enumerate(seats):
        add(SeatPresence, seat, True, player=players[i], stack=hh.starting_stacks[i])
        say(f"seat {seat} {names[i]} {hh.starting_stacks[i]}")
    add(SetLevel, sb, bb, ante, bb_ante)
    say(f"level {sb} {bb}" + (f" ante {ante}" if ante else "") + (f" bba {bb_ante}" if bb_ante else ""))
    add(MoveButton, seats[-1])
    say(f"button {seats[-1]}")
    add(ConsolePress, "new-hand")
    hand_line = len(lines)
    say("hand")

    used: set[str] = set()
    for action in hh.actions:
        parts = action.split()
        if parts[:2] in (["d", "dh"], ["d", "db"]):
            used.update(_cards(parts[-1]))
        elif len(parts) > 2 and parts[1] == "sm" and parts[2] != "-":
            used.update(_cards(parts[2]))
    burns = iter(c for c in DECK if c not in used)

    # who posts what, in PHH (position) order
    table = _Table(stacks=list(hh.starting_stacks), bets=[0] * n, live=[True] * n, chips=_chip_set(chip_unit(hh)))
    posts = [ante] * n if ante else [0] * n
    if bb_ante:
        posts[1 if n > 2 else 0] = bb_ante
    for i in range(n):
        table.stacks[i] -= min(posts[i], table.stacks[i])
    blind_of = [sb, bb] + [0] * (n - 2) if n > 2 else [bb, sb]
    for i in range(n):
        paid = min(blind_of[i], table.stacks[i])
        table.bets[i] = paid
        table.stacks[i] -= paid
    table.zones = [dict(_chips(b, False, table.chips)) if b else {} for b in table.bets]
    lines[hand_line] = " ".join(["hand"] + [f"{seats[i]}:{b}" for i, b in enumerate(table.bets) if b])

    expected: list[Expected] = []
    holes: dict[int, list[str]] = {}
    street = 0
    for action in hh.actions:
        parts = action.split()
        if parts[0] == "d" and parts[1] == "dh":
            holes[int(parts[2][1:]) - 1] = _cards(parts[3])
            if len(holes) == n:
                say("deal " + " ".join(f"{seats[i]}:{''.join(holes[i])}" for i in range(n)))
                for round_ in range(2):
                    for i in range(n):
                        card = holes[i][round_]
                        add(CardEntered, "shoe", card)
                        add(CardEntered, f"seat:{seats[i]}", card)
            continue
        if parts[0] == "d" and parts[1] == "db":
            cards = _cards(parts[2])
            name = STREET_NAMES[street]
            street += 1
            burn = next(burns)
            say(f"board {name} {''.join(cards)} burn {burn}")
            add(CardEntered, "shoe", burn)
            add(CardEntered, "burn", burn)
            for card in cards:
                add(CardEntered, "shoe", card)
                add(CardEntered, f"board:{name}", card)
            table.bets = [0] * n
            for i in range(n):
                if table.zones[i]:
                    table.zones[i] = {}
                    add(ChipsInZone, f"bet:{seats[i]}", 0)
            continue
        i = int(parts[0][1:]) - 1
        seat = seats[i]
        verb = parts[1]
        if verb == "f":
            add(CardEntered, "muck", holes[i][0])
            add(CardEntered, "muck", holes[i][1])
            table.live[i] = False
            say(f"fold {seat}")
            expected.append(Expected(seat, "fold", 0))
        elif verb == "cc":
            owed = min(max(table.bets) - table.bets[i], table.stacks[i])
            if owed == 0:
                add(ConsolePress, "confirm")
                say("confirm")
                expected.append(Expected(seat, "check", table.bets[i]))
            else:
                say(f"push {seat} " + _push(table, i, owed, split=False))
                add(ChipsInZone, f"bet:{seat}", table.bets[i], tuple(sorted(table.zones[i].items(), reverse=True)))
                expected.append(Expected(seat, "call", table.bets[i]))
        elif verb == "cbr":
            total = int(parts[2])
            kind = "raise" if max(table.bets) else "bet"
            say(f"push {seat} " + _push(table, i, total - table.bets[i], split=True))
            add(ChipsInZone, f"bet:{seat}", table.bets[i], tuple(sorted(table.zones[i].items(), reverse=True)))
            expected.append(Expected(seat, kind, total))
        elif verb == "sm":
            if len(parts) > 2 and parts[2] == "-":
                add(CardEntered, "muck", holes[i][0])
                say(f"fold {seat}")
        else:
            raise PhhError(f"action {action!r} is not played at this table")
    able = [i for i in range(n) if table.live[i] and table.stacks[i] > 0]
    if sum(table.live) > 1 and len(able) > 1:
        add(ConsolePress, "confirm")                  # the dealer confirms the tabled hands
        say("confirm")
    return obs, expected, lines


def _push(table: _Table, i: int, amount: int, *, split: bool) -> str:
    """Push *amount* for position *i*; the chips pushed, as a script writes them (``100x2 25``)."""
    new = _chips(amount, split, table.chips)
    table.zones[i] = _merge(table.zones[i].items(), new)
    table.bets[i] += amount
    table.stacks[i] -= amount
    return " ".join(f"{value}x{count}" if count > 1 else f"{value}" for value, count in new)


@dataclass(frozen=True)
class Verdict:
    """How one hand went through the engine."""

    number: int
    agree: bool
    odd_chip: bool
    detail: str
    events: tuple[Event, ...]


def verify_hand(number: int, hh: HandHistory, profile: Profile) -> Verdict:
    """Run hand *hh* through a fresh engine; compare actions and final stacks with the record."""
    try:
        obs, expected = observations(hh)
        unit = chip_unit(hh)
    except PhhError as exc:
        return Verdict(number, False, False, f"cannot replay: {exc}", ())
    engine = HandEngine(profile, "phh", chip_unit=unit)
    events: list[Event] = []
    for o in obs:
        events.extend(engine.feed(o))
    actions = [e for e in events if isinstance(e, ActionTaken)]
    for k, (want, got) in enumerate(zip(expected, actions)):
        if (want.seat, want.action, want.total) != (got.seat, got.action, got.total):
            return Verdict(number, False, False, f"action {k + 1}: record {want}, engine {got.to_json()}",
                           tuple(events))
    irregular = [e for e in events if e.KIND == "irregularity"]
    if irregular:
        return Verdict(number, False, False, f"first irregularity: {irregular[0].to_json()}", tuple(events))
    if len(actions) != len(expected):
        return Verdict(number, False, False, f"{len(expected)} actions recorded, engine took {len(actions)}",
                       tuple(events))
    ended = [e for e in events if isinstance(e, HandEnded)]
    if not ended:
        return Verdict(number, False, False, "the hand did not end", tuple(events))
    if hh.finishing_stacks is None:
        return Verdict(number, False, False, "the record has no finishing stacks", tuple(events))
    stacks = dict(zip(ended[-1].seats, ended[-1].stacks))
    final = [stacks[s] for s in range(1, len(hh.finishing_stacks) + 1)]
    record = list(hh.finishing_stacks)
    if final == record:
        return Verdict(number, True, False, "", tuple(events))
    if any(x != math.floor(x) for x in record) and all(abs(a - b) <= 1 for a, b in zip(final, record)):
        # Chips cannot be halved at a live table: the odd chip goes where the profile says (000 §20).
        split = [e for e in events if isinstance(e, PotAwarded) and len(e.winners) > 1]
        ok = all(_odd_chip_where_profile_says(e, profile) for e in split)
        detail = "odd chip " + ("placed by " if ok else "NOT placed by ") + profile.id + " profile rules"
        return Verdict(number, ok, True, detail, tuple(events))
    return Verdict(number, False, False, f"final stacks {final}, record {record}", tuple(events))


def _odd_chip_where_profile_says(award: PotAwarded, profile: Profile) -> bool:
    """First winner left of the button has the biggest share (000 §20A), or nothing extra (004 B.b)."""
    shares = award.amounts
    if profile.odd_chip == "next-pot":
        return len(set(shares)) == 1
    return shares[0] == max(shares) and all(s == min(shares) for s in shares[1:])


def verify(hands: Iterable[tuple[int, HandHistory]], profile: Profile) -> Iterator[Verdict]:
    for number, hh in hands:
        yield verify_hand(number, hh, profile)
