"""The hand engine: observations in, events out, the single authority on the hand.

Pure and deterministic: no I/O, no clock (each observation carries its time),
no global state. The same observations always give the same events.

What it owns (pokerkit does not): the seat map, the button and blinds
(:mod:`.seating`), levels that start on the next hand (000 §23), chips pushed
becoming actions (:mod:`.betting`), implied checks, the substantial-action
count (000 §36, 003 art. 47), misdeal replays (000 §35C) and odd chips carried
to the next pot (004 B.b). What pokerkit owns, through :mod:`.game`: legality
of actions, cards, pots, side pots, showdown order and hand evaluation.

Each observation type has its handler in :data:`ROUTES`, by seam: the hand's
life (:mod:`.lifecycle`), cards (:mod:`.dealing`), chips and actions
(:mod:`.actions`), showdown and pots (:mod:`.pots`); the engine itself keeps the
table's holds, pauses and devices, and what the handlers report through.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from firmware_host.events import Event, HandEnded, Irregularity, IrregularityResolved, Notice
from firmware_host.observations import (
    CardEntered,
    CardExposed,
    CardLeft,
    ChipsInZone,
    ConsoleButton,
    ConsolePress,
    Declaration,
    DeviceFault,
    DeviceRecovered,
    ForeignCard,
    MoveButton,
    Observation,
    Pause,
    Resolution,
    SeatPresence,
    SetLevel,
    VoidHand,
    WrongBackCard,
)
from firmware_host.rules import actions, dealing, lifecycle, pots
from firmware_host.rules.checks import Finding
from firmware_host.rules.game import GameError
from firmware_host.rules.hand import Hand
from firmware_host.rules.holds import VOIDING, Hold, Postponed, Until, apply, random_pick, void_effect
from firmware_host.rules.irregularities import procedure, report_procedure
from firmware_host.rules.lineup import Lineup
from firmware_host.rules.profile import Level, Profile


class HandEngine:
    """The state machine of one table.

    >>> from firmware_host.observations import ConsolePress, MoveButton, SeatPresence
    >>> from firmware_host.rules.profile import builtin_profile
    >>> engine = HandEngine(builtin_profile("000"), "t1")
    >>> for seat in (1, 2):
    ...     engine.feed(SeatPresence(0.0, seat, True, f"p{seat}", 20000))
    []
    []
    >>> engine.feed(MoveButton(1.0, 1))
    []
    >>> [started] = engine.feed(ConsolePress(2.0, "new-hand"))
    >>> started.button, started.small_blind_seat, started.big_blind_seat, started.posted   # heads-up: 000 §34
    (1, 1, 2, (100, 50))

    The attributes other than the properties are the handlers' to change.
    """

    def __init__(self, profile: Profile, table: str, *, level: Level | None = None,
                 chip_unit: int | None = None) -> None:
        self.profile = profile
        self.table = table
        self.level = level or profile.levels[0]
        self.unit = chip_unit or profile.smallest_chip
        self.hand_number = 0
        self.seq = 0
        self.carried = 0                         # odd chips carried to the next pot (004 B.b)
        self.paused = False
        self.lineup = Lineup()
        self.hand: Hand | None = None
        self.hold: Hold | None = None
        self.postponed = Postponed()
        self._out: list[Event] = []

    # -- public state ----------------------------------------------------
    @property
    def in_hand(self) -> bool:
        return self.hand is not None

    @property
    def stacks(self) -> dict[int, int]:
        """Every seated player's stack (between hands: after the last hand)."""
        return {s: p.stack for s, p in sorted(self.lineup.players.items())}

    @property
    def actions(self) -> int:
        """Voluntary actions this hand (blinds and antes do not count)."""
        return self.hand.actions.count if self.hand else 0

    @property
    def substantial_action(self) -> bool:
        """Has substantial action occurred (000 §36; 003 art. 47 'two actions')?"""
        hand = self.hand
        return hand is not None and hand.actions.substantial(self.profile.substantial_action)

    @property
    def on_hold(self) -> str | None:
        """The kind of irregularity holding the hand ('needs floor'), or None."""
        return self.hold.kind if self.hold else None

    @property
    def actor(self) -> int | None:
        return self.hand.game.actor if self.hand else None

    # -- feeding ---------------------------------------------------------
    def feed(self, obs: Observation) -> list[Event]:
        """Apply one observation; return the events it caused, in order."""
        out: list[Event] = []
        self._out = out
        self.route(obs)
        return out

    def feed_into(self, obs: Observation, out: list[Event]) -> None:
        """Apply one observation; append the events it caused to *out*."""
        self._out = out
        self.route(obs)

    def route(self, obs: Observation) -> None:
        """Apply *obs* now, or postpone it while the hand is on hold or the table paused."""
        handler, waits = ROUTES[type(obs)]
        if waits and (self.hold is not None or self.paused):
            if dealing.joins_hold(self, obs):
                return
            self.postponed.add(obs, Until.RULING)    # nothing is lost: it is applied once the floor has ruled
            return
        handler(self, obs)

    def release(self, until: Until, seat: int | None = None) -> None:
        """Apply what was postponed until *until* (for *seat*), in the order it came."""
        for obs in self.postponed.take(until, seat):
            self.route(obs)

    # -- reporting -------------------------------------------------------
    def emit(self, cls: type[Event], t: float, **fields: Any) -> None:
        """Add an event of *cls*, stamped with the table, the hand and the next sequence number."""
        self.seq += 1
        self._out.append(cls(table=self.table, hand=self.hand_number, seq=self.seq, t=t, **fields))

    def report(self, t: float, kind: str, procedure: str, *, rule: str = "", seats: tuple[int, ...] = (),
               cards: tuple[str, ...] = ()) -> None:
        """An irregularity outside the catalogue (mostly an observation refused): *procedure* says what to do
        (in English); the rule of the active house and the French come from :func:`report_procedure`
        (*rule*, when given, is already the active house's: a hold's)."""
        proc = report_procedure(kind, self.profile)
        self.emit(Irregularity, t, irregularity=kind, rule=rule or proc.rule, seats=seats, procedure=procedure,
                  cards=cards, substantial_action=self.substantial_action, procedure_fr=proc.fr)

    def irregular(self, t: float, finding: Finding) -> None:
        """Report *finding* with the active house's rule and procedure; hold the hand if the floor must rule."""
        substantial = self.substantial_action
        proc = procedure(finding.kind, self.profile, finding.variant, substantial_action=substantial)
        self.emit(Irregularity, t, irregularity=finding.kind, rule=proc.rule, seats=finding.seats,
                  procedure=f"{finding.detail}. {proc.en}", procedure_fr=proc.fr, options=proc.options,
                  needs_floor=bool(proc.options), cards=finding.cards, substantial_action=substantial)
        if proc.options and self.hand is not None:
            self.hold = Hold(finding.kind, proc.rule, proc.options, finding.seats, finding.cards)

    def notice(self, t: float, kind: str, text: str, rule: str = "") -> None:
        """Something to know that is not an irregularity (a :class:`~firmware_host.events.Notice`); a rule
        of another house (the TDA's) says the active house is silent."""
        if rule and not rule.startswith(self.profile.id):
            rule += f" (house {self.profile.id} is silent)"
        self.emit(Notice, t, notice=kind, text=text, rule=rule)

    def end_hand(self, t: float, *, voided: bool = False) -> None:
        """The hand is over (void: every bet returned, and replayed next, 000 §35C); what waited for it goes."""
        hand = self.hand
        assert hand is not None
        stacks = hand.final_stacks(voided)
        self.lineup.hand_over(stacks, voided)
        seats = tuple(stacks)
        self.emit(HandEnded, t, seats=seats, stacks=tuple(stacks[s] for s in seats), carried=self.carried,
                  voided=voided)
        self.hand = None
        self.postponed.drop(Until.TURN, Until.DEAL_END)

    # -- the TD and the floor --------------------------------------------
    def _pause(self, obs: Pause) -> None:
        if obs.paused == self.paused:
            return self.report(obs.t, "pause-unchanged",
                               f"the table is already {'paused' if obs.paused else 'running'}")
        self.paused = obs.paused
        self.notice(obs.t, "table-paused" if obs.paused else "table-resumed",
                    (obs.reason or "by the TD") + ("; play waits" if obs.paused else ""), rule="000 §1")
        if not obs.paused and self.hold is None:
            self.release(Until.RULING)

    def _void_hand(self, obs: VoidHand) -> None:
        if self.hand is None or obs.hand != self.hand_number:
            return self.report(obs.t, "no-such-hand", f"hand {obs.hand} is not in progress "
                               f"(hand {self.hand_number} {'is' if self.hand else 'was the last'})")
        self.notice(obs.t, "hand-voided", f"the TD voided hand {obs.hand}: {obs.reason}; every bet returned, "
                    "the hand is replayed", rule="000 §1")
        self.hold = None
        self.postponed.drop(Until.RULING)
        self.end_hand(obs.t, voided=True)

    def _resolve(self, obs: Resolution) -> None:
        """The dealer or the TD resolves the irregularity on hold with one of its options."""
        hold, hand, t = self.hold, self.hand, obs.t
        if hold is None or hand is None:
            return self.report(t, "nothing-to-resolve",
                               f"{obs.by} resolution {obs.decision!r}: no irregularity on hold")
        if obs.decision not in hold.options:
            return self.report(t, "bad-resolution", f"{obs.decision!r} does not resolve {hold.kind}; "
                               f"choose one of {', '.join(hold.options)}", rule=hold.rule)
        self.hold = None
        if obs.decision in VOIDING:
            self._resolved(hold, obs, void_effect(obs.decision))
            self.end_hand(t, voided=True)
            self.postponed.drop(Until.RULING)
            return
        card = obs.card or ""
        if obs.decision == "random-burn":     # 000 §39: the floor's pick, reproducible from the hand itself
            card = obs.card or random_pick(hold, f"{self.table}:{self.hand_number}:{self.seq}:{''.join(hold.cards)}")
            if card not in hold.cards:
                self.hold = hold
                return self.report(t, "bad-resolution", f"{card} is not one of the four flop cards {hold.cards}")
        before = tuple(hand.game.board)
        try:
            effect = apply(obs.decision, hand, hold, card)
        except GameError as exc:
            self.hold = hold
            return self.report(t, "bad-resolution", f"{obs.decision}: {exc}", rule=hold.rule)
        after = tuple(hand.game.board)
        self._resolved(hold, obs, effect, board=after if after != before else ())
        pots.settle(self, t)                  # a dead hand may leave one live hand: the pot is won
        self.release(Until.RULING)

    def _resolved(self, hold: Hold, obs: Resolution, effect: str, board: tuple[str, ...] = ()) -> None:
        self.emit(IrregularityResolved, obs.t, irregularity=hold.kind, rule=hold.rule, by=obs.by,
                  decision=obs.decision, effect=effect, cards=hold.cards, board=board)

    def _press(self, obs: ConsolePress) -> None:
        """A console press: with a hand on hold, confirm applies the procedure and misdeal chooses it."""
        hold = self.hold
        if hold is not None:
            if obs.button == "confirm":
                return self._resolve(Resolution(obs.t, "dealer", hold.options[0]))
            if obs.button == "misdeal" and "misdeal" in hold.options:
                return self._resolve(Resolution(obs.t, "dealer", "misdeal"))
            if obs.button == "new-hand":
                self.postponed.add(obs, Until.RULING)
                return
        elif self.paused:                 # the TD paused the table (000 §1): no press acts until resumed
            self.postponed.add(obs, Until.RULING)
            return
        PRESSES[obs.button](self, obs.t)

    # -- devices ---------------------------------------------------------
    def _device_fault(self, obs: DeviceFault) -> None:
        self.report(obs.t, f"device-fault:{obs.fault}", f"{obs.device}: {obs.detail or obs.fault}; check the "
                    "device, the hand continues only when the dealer confirms every card was read")

    def _device_recovered(self, obs: DeviceRecovered) -> None:
        self.notice(obs.t, "device-recovered", f"{obs.device}: {obs.detail or 'working again'}")


class Route(NamedTuple):
    """How an observation is applied: its handler, and whether it waits while the hand is held."""

    handler: Callable[[HandEngine, Any], None]
    waits: bool


ROUTES: dict[type[Observation], Route] = {
    CardEntered: Route(dealing.card_entered, waits=True),
    CardLeft: Route(dealing.card_left, waits=True),
    CardExposed: Route(dealing.card_exposed, waits=True),
    ForeignCard: Route(dealing.foreign_card, waits=True),
    WrongBackCard: Route(dealing.wrong_back_card, waits=True),
    ChipsInZone: Route(actions.chips_in_zone, waits=True),
    Declaration: Route(actions.declaration, waits=True),
    MoveButton: Route(lifecycle.move_button, waits=True),
    SeatPresence: Route(lifecycle.seat_presence, waits=False),
    SetLevel: Route(lifecycle.set_level, waits=False),
    ConsolePress: Route(HandEngine._press, waits=False),
    Resolution: Route(HandEngine._resolve, waits=False),
    Pause: Route(HandEngine._pause, waits=False),
    VoidHand: Route(HandEngine._void_hand, waits=False),
    DeviceFault: Route(HandEngine._device_fault, waits=False),
    DeviceRecovered: Route(HandEngine._device_recovered, waits=False),
}
"""Every observation type's handler. While an irregularity holds the hand (or the TD paused the
table) an observation that waits is postponed until the floor has ruled; the others apply at once."""

PRESSES: dict[ConsoleButton, Callable[[HandEngine, float], None]] = {
    "new-hand": lifecycle.new_hand,
    "confirm": lifecycle.confirm,
    "misdeal": lifecycle.misdeal,
    "floor": lifecycle.floor,
}
"""What each console button does when no irregularity holds the hand."""
