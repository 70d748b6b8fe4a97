"""Real hands (PHH) as the table's hardware would see them, and their verification.

A PHH hand lists players by position (small blind first) and has no burn
cards. :func:`observations` turns one into what the table sees: seats and
stacks, the level, the button, shoe draws and zone reads (round-robin deal,
a burn before each street), chips pushed into the bet zones, folds to the
muck, checks confirmed on the console. :func:`verify` runs them through a
fresh :class:`~firmware_host.rules.engine.HandEngine` and compares the outcome
with the record's ``finishing_stacks``.

A hand with a dead small blind (the hall's ``_dead_small_blind``: 004 D.a,
000 §32) cannot start on a fresh engine, which puts the small blind on the
first player after the button. The table reaches it only after the big blind
of the hand before busted, so the replay plays that hand first, a lead-in:
a phantom player sits between the record's button and its big blind, posts
the big blind all-in and loses it to a caller, and leaves; the small blind
then falls on his empty seat, dead, under the dead-button rule
(``firmware_host.rules.seating``). The lead-in's stacks are chosen so that
every player starts the record's hand with the record's starting stack; only
the record's hand is compared.
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

from firmware_host.events import ActionTaken, Event, HandEnded, HandStarted, PotAwarded
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


PHANTOM = "phantom"
"""The lead-in's phantom player: the big blind of the hand before a dead small blind, who busts (004 D.a)."""

PHANTOM_SEAT = 1
LEAD_IN_CALLER = ("As", "Ad")
LEAD_IN_PHANTOM = ("7c", "2d")
LEAD_IN_BOARD = ("Kh", "Qs", "9c", "4d", "3h")
"""The lead-in's cards: the caller's aces beat the phantom's 7-2 on a board with no straight or flush for it."""


@dataclass
class _Converted:
    """A hand as observations, the actions the engine should report, and the table script."""

    obs: list[Observation] = field(default_factory=list)
    expected: list[Expected] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)   # the seat of each PHH position
    lead_in: int = 0                                  # how many of ``obs`` are the lead-in's (a dead small blind)
    t: float = 0.0

    def add(self, o_type: Callable[..., Observation], *args: Any, **kwargs: Any) -> None:
        self.t += 1.0
        self.obs.append(o_type(self.t, *args, **kwargs))

    def say(self, line: str) -> None:
        self.lines.append(line)


def observations(hh: HandHistory) -> tuple[list[Observation], list[Expected]]:
    """The observations the table would make of hand *hh*, and the actions it should report.

    With a dead small blind the observations begin with the lead-in hand (see the module's doc); the
    actions are the record's hand's only.
    """
    c = _convert(hh)
    return c.obs, c.expected


def script(hh: HandHistory) -> str:
    """Hand *hh* as a table script for the simulator (docs/scenarios.md), its lead-in first if any."""
    return "\n".join(_convert(hh).lines) + "\n"


def _convert(hh: HandHistory) -> _Converted:
    if hh.variant != "NT":
        raise PhhError(f"variant {hh.variant!r}: the table plays No-Limit Texas Hold'em ('NT') only")
    n = len(hh.starting_stacks)
    if hh.blinds_or_straddles is None:
        raise PhhError("the hand has no blinds")
    blinds = list(hh.blinds_or_straddles)
    dead = bool(hh.user_defined_fields.get("_dead_small_blind"))
    if dead:
        if n < 3:
            raise PhhError("a dead small blind (004 D.a, 000 §32) with 2 players cannot be replayed: heads-up "
                           "the button posts the small blind (000 §34), it is never dead")
        if blinds[0] <= 0 or any(blinds[1:]):
            raise PhhError(f"a dead small blind: blinds {blinds} must be the big blind (p1) and nothing else")
    elif any(blinds[2:]) or (n > 2 and blinds[:2] != sorted(blinds[:2])):
        raise PhhError("straddles are not played at this table")
    big_at = 0 if dead or n == 2 else 1                # the big blind's position
    antes = list(hh.antes)
    ante = bb_ante = 0
    if any(antes):
        if len(set(antes)) == 1:
            ante = antes[0]
        elif sum(1 for a in antes if a) == 1 and antes[big_at]:
            bb_ante = max(antes)
        else:
            raise PhhError(f"antes {antes} are neither uniform nor a big-blind ante")
    chips = _chip_set(chip_unit(hh))
    if dead:
        bb = blinds[0]
        sb = _dead_hand_small_blind(hh, bb, chips[0])
    else:
        sb, bb = (blinds[0], blinds[1]) if n > 2 else (min(blinds[:2]), max(blinds[:2]))
    players: list[str | None] = list(hh.players) if hh.players else [None] * n
    names = [(p or f"p{i + 1}").replace(" ", "_") for i, p in enumerate(players)]
    c = _Converted()
    add, say = c.add, c.say
    if dead:                                          # the phantom in seat 1: positions one seat on
        c.seats = seats = list(range(PHANTOM_SEAT + 1, n + 2))
        _lead_in(c, hh, players, names, sb, bb, chips)
        if ante or bb_ante:                           # the lead-in has none: the level from this hand (000 §23)
            add(SetLevel, sb, bb, ante, bb_ante)
            say(f"level {sb} {bb}" + (f" ante {ante}" if ante else "") + (f" bba {bb_ante}" if bb_ante else ""))
        c.lead_in = len(c.obs)
    else:
        c.seats = seats = list(range(1, n + 1))      # PHH position i sits in seat i+1; button = seat n
        for i, seat in enumerate(seats):
            add(SeatPresence, seat, True, player=players[i], stack=hh.starting_stacks[i])
            say(f"seat {seat} {names[i]} {hh.starting_stacks[i]}")
        add(SetLevel, sb, bb, ante, bb_ante)
        say(f"level {sb} {bb}" + (f" ante {ante}" if ante else "") + (f" bba {bb_ante}" if bb_ante else ""))
        add(MoveButton, seats[-1])
        say(f"button {seats[-1]}")
    add(ConsolePress, "new-hand")
    hand_line = len(c.lines)
    say("hand")

    used: set[str] = set()
    for action in hh.actions:
        parts = action.split()
        if parts[:2] in (["d", "dh"], ["d", "db"]):
            used.update(_cards(parts[-1]))
        elif len(parts) > 2 and parts[1] == "sm" and parts[2] != "-":
            used.update(_cards(parts[2]))
    burns = iter(card for card in DECK if card not in used)

    # who posts what, in PHH (position) order
    table = _Table(stacks=list(hh.starting_stacks), bets=[0] * n, live=[True] * n, chips=chips)
    posts = [ante] * n if ante else [0] * n
    if bb_ante:
        posts[big_at] = bb_ante
    for i in range(n):
        table.stacks[i] -= min(posts[i], table.stacks[i])
    if dead:
        blind_of = [bb] + [0] * (n - 1)               # 004 D.a: no small blind
    else:
        blind_of = [sb, bb] + [0] * (n - 2) if n > 2 else [bb, sb]
    for i in range(n):
        paid = min(blind_of[i], table.stacks[i])
        table.bets[i] = paid
        table.stacks[i] -= paid
    table.zones = [dict(_chips(b, False, table.chips)) if b else {} for b in table.bets]
    c.lines[hand_line] = " ".join(["hand"] + [f"{seats[i]}:{b}" for i, b in enumerate(table.bets) if b])

    expected = c.expected
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
            _board(c, table, seats, STREET_NAMES[street], cards, next(burns))
            street += 1
            continue
        i = int(parts[0][1:]) - 1
        seat = seats[i]
        verb = parts[1]
        if verb == "f":
            _fold(c, table, i, seat, holes[i])
            expected.append(Expected(seat, "fold", 0))
        elif verb == "cc":
            owed = min(max(table.bets) - table.bets[i], table.stacks[i])
            if owed == 0:
                add(ConsolePress, "confirm")
                say("confirm")
                expected.append(Expected(seat, "check", table.bets[i]))
            else:
                _call(c, table, i, seat, owed)
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
    if sum(table.live) > 1 and all(table.stacks):
        add(ConsolePress, "confirm")                  # the dealer confirms the tabled hands
        say("confirm")                                # (with a player all-in they are tabled at once: 000 §16)
    return c


def _fold(c: _Converted, table: _Table, i: int, seat: int, hole: list[str] | tuple[str, ...]) -> None:
    c.add(CardEntered, "muck", hole[0])
    c.add(CardEntered, "muck", hole[1])
    table.live[i] = False
    c.say(f"fold {seat}")


def _call(c: _Converted, table: _Table, i: int, seat: int, owed: int) -> None:
    c.say(f"push {seat} " + _push(table, i, owed, split=False))
    c.add(ChipsInZone, f"bet:{seat}", table.bets[i], tuple(sorted(table.zones[i].items(), reverse=True)))


def _board(c: _Converted, table: _Table, seats: list[int], name: str, cards: Iterable[str], burn: str) -> None:
    """The burn, the street's cards, then the bets swept (each zone read empty)."""
    cards = list(cards)
    c.say(f"board {name} {''.join(cards)} burn {burn}")
    c.add(CardEntered, "shoe", burn)
    c.add(CardEntered, "burn", burn)
    for card in cards:
        c.add(CardEntered, "shoe", card)
        c.add(CardEntered, f"board:{name}", card)
    table.bets = [0] * len(table.bets)
    for i, seat in enumerate(seats):
        if table.zones[i]:
            table.zones[i] = {}
            c.add(ChipsInZone, f"bet:{seat}", 0)


def _dead_hand_small_blind(hh: HandHistory, bb: int, unit: int) -> int:
    """The small blind of the level of a hand whose small blind is dead: its ``_level`` (a table's record),
    else half the big blind in whole chips. Nobody posts it in that hand: it is the lead-in's."""
    level = hh.user_defined_fields.get("_level")
    if isinstance(level, dict) and "small_blind" in level:
        sb = level["small_blind"]
        if not isinstance(sb, int) or not 0 < sb < bb:
            raise PhhError(f"_level small_blind {sb!r} must be a whole number between 0 and the big blind {bb}")
        return sb
    sb = bb // 2 // unit * unit
    if sb <= 0:
        raise PhhError(f"a dead small blind: the big blind {bb} has no smaller blind in chips of {unit}: "
                       "give the level (_level)")
    return sb


def _lead_in(c: _Converted, hh: HandHistory, players: list[str | None], names: list[str], sb: int, bb: int,
             chips: tuple[int, ...]) -> None:
    """The hand before a dead small blind, as the table would see it (004 D.a, 000 §32).

    Seats: the phantom in seat 1, PHH position i in seat i+2, so that he sits between the record's button
    (the last position) and its big blind (p1). The lead-in's button is the record's next-to-last player,
    its small blind the record's button, its big blind the phantom, all-in for exactly the blind. A caller
    (the small blind, or the first of the others with the chips) calls and wins at showdown; the others
    fold. The phantom, broke, leaves. Next hand the big blind advances to p1, the small blind falls on the
    phantom's empty seat, dead, and the button goes where the small blind was: the record's button
    (``seating._dead_button``). The lead-in's stacks are the record's less what each wins in it.
    """
    seats = c.seats
    n = len(seats)
    start = list(hh.starting_stacks)
    small = n - 1                                     # the lead-in's small blind: the record's button
    if start[small] >= 2 * bb:                        # he completes and wins the phantom's blind
        caller = small
    else:                                             # he folds his small blind; another calls
        found = [i for i in range(n - 1) if start[i] >= 2 * bb + sb]
        if not found:
            raise PhhError(f"a dead small blind (004 D.a): nobody has the chips to call the big blind {bb} "
                           "in the hand before it (the button needs 2 big blinds, another player 2 and a "
                           "small blind)")
        caller = found[0]
    won = [0] * n
    won[caller] = bb if caller == small else bb + sb
    if caller != small:
        won[small] = -sb
    lead = [start[i] - won[i] for i in range(n)]
    every = [PHANTOM_SEAT] + seats                    # index k of the lead-in's table: seat every[k]

    c.add(SeatPresence, PHANTOM_SEAT, True, player=PHANTOM, stack=bb)
    c.say(f"seat {PHANTOM_SEAT} {PHANTOM} {bb}")
    for i, seat in enumerate(seats):
        c.add(SeatPresence, seat, True, player=players[i], stack=lead[i])
        c.say(f"seat {seat} {names[i]} {lead[i]}")
    c.add(SetLevel, sb, bb, 0, 0)
    c.say(f"level {sb} {bb}")
    c.add(MoveButton, seats[n - 2])
    c.say(f"button {seats[n - 2]}")
    c.add(ConsolePress, "new-hand")
    table = _Table(stacks=[0] + lead, bets=[bb] + [0] * n, live=[True] * (n + 1), chips=chips)
    table.bets[1 + small] = sb
    table.stacks[1 + small] -= sb
    table.zones = [dict(_chips(b, False, chips)) if b else {} for b in table.bets]
    c.say(f"hand {seats[small]}:{sb} {PHANTOM_SEAT}:{bb}")

    fixed = set(LEAD_IN_CALLER + LEAD_IN_PHANTOM + LEAD_IN_BOARD)
    spare = iter(card for card in DECK if card not in fixed)
    holes = [LEAD_IN_PHANTOM] + [LEAD_IN_CALLER if i == caller else (next(spare), next(spare)) for i in range(n)]
    deal = [1 + small, 0] + list(range(1, n))         # from the small blind, clockwise
    c.say("deal " + " ".join(f"{every[k]}:{''.join(holes[k])}" for k in deal))
    for round_ in range(2):
        for k in deal:
            c.add(CardEntered, "shoe", holes[k][round_])
            c.add(CardEntered, f"seat:{every[k]}", holes[k][round_])
    for k in list(range(1, n)) + [1 + small]:         # preflop: after the big blind, round to the small blind
        if k == 1 + caller:
            _call(c, table, k, every[k], min(bb - table.bets[k], table.stacks[k]))
        else:
            _fold(c, table, k, every[k], holes[k])
    for name, cards in zip(STREET_NAMES, (LEAD_IN_BOARD[:3], LEAD_IN_BOARD[3:4], LEAD_IN_BOARD[4:])):
        _board(c, table, every, name, cards, next(spare))
    c.add(SeatPresence, PHANTOM_SEAT, False)          # all-in, no confirm: the showdown is the engine's
    c.say(f"leave {PHANTOM_SEAT}")


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
    """Run hand *hh* through a fresh engine; compare actions and final stacks with the record.

    A dead small blind's lead-in hand is played first (see the module's doc) and must leave every player
    with the record's starting stack; its events are not compared, nor returned.
    """
    try:
        converted = _convert(hh)
        unit = chip_unit(hh)
    except PhhError as exc:
        return Verdict(number, False, False, f"cannot replay: {exc}", ())
    engine = HandEngine(profile, "phh", chip_unit=unit)
    seats = converted.seats
    if converted.lead_in and seats[-1] > profile.seats:
        return Verdict(number, False, False, f"cannot replay: a dead small blind (004 D.a) needs the seat of the "
                       f"big blind who busted: {len(seats)} players and him need {seats[-1]} seats, the "
                       f"{profile.id} table has {profile.seats}", ())
    if converted.lead_in:
        lead: list[Event] = []
        for o in converted.obs[: converted.lead_in]:
            lead.extend(engine.feed(o))
        problem = _lead_in_problem(lead, engine, hh, seats)
        if problem:
            return Verdict(number, False, False, f"cannot replay the dead small blind (004 D.a): {problem}",
                           tuple(lead))
    events: list[Event] = []
    for o in converted.obs[converted.lead_in:]:
        events.extend(engine.feed(o))
    expected = converted.expected
    if converted.lead_in:
        started = next((e for e in events if isinstance(e, HandStarted)), None)
        if started is not None and (started.small_blind_seat is not None or started.big_blind_seat != seats[0]):
            return Verdict(number, False, False, f"the lead-in left no dead small blind ({profile.id} profile's "
                           f"seating rules): engine {started.to_json()}", tuple(events))
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
    final = [stacks[s] for s in seats[: len(hh.finishing_stacks)]]
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


def _lead_in_problem(events: list[Event], engine: HandEngine, hh: HandHistory, seats: list[int]) -> str:
    """What went wrong in a dead small blind's lead-in hand, or "" when it left the record's stacks."""
    irregular = [e for e in events if e.KIND == "irregularity"]
    if irregular:
        return f"lead-in's first irregularity: {irregular[0].to_json()}"
    if sum(isinstance(e, HandEnded) for e in events) != 1 or engine.in_hand:
        return "the lead-in hand did not end"
    stacks = engine.stacks
    got = [stacks.get(s, 0) for s in seats]
    if PHANTOM_SEAT in stacks or got != list(hh.starting_stacks):
        return f"the lead-in left stacks {stacks}, the record starts with {list(hh.starting_stacks)}"
    return ""


def _odd_chip_where_profile_says(award: PotAwarded, profile: Profile) -> bool:
    """First winner left of the button has the biggest share (000 §20A), or nothing extra (004 B.b)."""
    shares = award.amounts
    if profile.odd_chip == "next-pot":
        return len(set(shares)) == 1
    return shares[0] == max(shares) and all(s == min(shares) for s in shares[1:])


def verify(hands: Iterable[tuple[int, HandHistory]], profile: Profile) -> Iterator[Verdict]:
    for number, hh in hands:
        yield verify_hand(number, hh, profile)
