"""The hand engine: observations in, events out, the single authority on the hand.

Pure and deterministic: no I/O, no clock (each observation carries its time),
no global state. The same observations always give the same events.

What it owns (pokerkit does not): the seat map, the button and blinds
(:mod:`.seating`), levels that start on the next hand (000 §23), chips pushed
becoming actions (:mod:`.betting`), implied checks, the substantial-action
count (000 §36, 003 art. 47), misdeal replays (000 §35C) and odd chips carried
to the next pot (004 B.b). What pokerkit owns, through :mod:`.game`: legality
of actions, cards, pots, side pots, showdown order and hand evaluation.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from firmware_host.rules import betting
from firmware_host.rules import seating
from firmware_host.rules.irregularities import after_substantial_action, procedure
from firmware_host.rules.chips import added, breakdown, odd_chip_divmod
from firmware_host.events import (
    ActionTaken, BoardDealt, CardBurned, Event, HandEnded, HandShown, HandStarted,
    HoleCardDealt, Irregularity, IrregularityResolved, PotAwarded,
)
from firmware_host.rules.game import Game, GameError
from firmware_host.observations import (
    CardEntered, CardExposed, CardLeft, ChipsInZone, ConsolePress, Declaration, DeviceFault, DeviceRecovered,
    ForeignCard, MoveButton, Observation, Pause, Resolution, SeatPresence, SetLevel, VoidHand, WrongBackCard,
    zone_seat,
)
from firmware_host.rules.profile import Level, Profile

BOARD_SIZES = {"flop": 3, "turn": 1, "river": 1}

MISDEALS = {"first-card-wrong-seat", "card-to-seat-not-dealt-in", "cards-face-up-in-deck",
            "wrong-number-of-cards", "exposed-card-misdeal", "button-short-a-card"}
"""Kinds that are a misdeal only before substantial action (000 §35D, 003 art. 77)."""

UNHELD = (Resolution, ConsolePress, DeviceFault, DeviceRecovered, SetLevel, SeatPresence, Pause, VoidHand)
"""What is still handled while an irregularity holds the hand; everything else waits for the resolution."""


@dataclass
class _Hold:
    """An irregularity waiting for the dealer or the TD."""

    kind: str
    rule: str
    options: tuple[str, ...]
    seats: tuple[int, ...]
    cards: tuple[str, ...]


@dataclass
class _Player:
    name: str | None
    stack: int
    new: bool


@dataclass
class _Hand:
    """What the engine tracks about the hand in progress, beside pokerkit."""

    game: Game
    positions: seating.Positions
    starting: dict[int, int]
    level: Level
    placed: dict[str, str] = field(default_factory=dict)     # card -> zone it was last read in
    owner: dict[str, int] = field(default_factory=dict)      # hole card -> seat
    zone_chips: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    zone_amount: dict[int, int] = field(default_factory=dict)
    board_buffer: list[str] = field(default_factory=list)
    mucked: set[int] = field(default_factory=set)
    declared: dict[int, Declaration] = field(default_factory=dict)
    pending: dict[int, Observation] = field(default_factory=dict)
    actions: int = 0
    chip_actions: int = 0
    shown: set[int] = field(default_factory=set)
    bonus: dict[int, int] = field(default_factory=dict)      # carried odd chips won this hand
    dealt: int = 0                                           # hole cards dealt so far
    face_up_in_deck: int = 0
    exposed: int = 0                                         # hole cards exposed by the dealer
    seen_up: set[str] = field(default_factory=set)           # cards (seats, after the deal) seen face up
    replace: dict[int, str] = field(default_factory=dict)    # seat -> exposed card to replace (002 C.2)
    deferred: list[Observation] = field(default_factory=list)  # waiting for the end of the deal
    flop_actions: int | None = None                          # actions count when the flop was dealt


class HandEngine:
    """The state machine of one table.

    >>> engine = HandEngine(profile, "t1")      # doctest: +SKIP
    >>> events = engine.feed(observation)       # doctest: +SKIP
    """

    def __init__(self, profile: Profile, table: str, *, level: Level | None = None,
                 chip_unit: int | None = None) -> None:
        self.profile = profile
        self.table = table
        self.level = level or profile.levels[0]
        self.unit = chip_unit or profile.smallest_chip
        self.hand_number = 0
        self.seq = 0
        self.carried = 0
        self._pending_level: Level | None = None
        self._players: dict[int, _Player] = {}
        self._button: int | None = None
        self._previous: seating.Positions | None = None
        self._replay = False
        self._hand: _Hand | None = None
        self._hold: _Hold | None = None
        self._held: list[Observation] = []
        self.paused = False

    # -- public state ----------------------------------------------------
    @property
    def in_hand(self) -> bool:
        return self._hand is not None

    @property
    def stacks(self) -> dict[int, int]:
        """Every seated player's stack (between hands: after the last hand)."""
        return {s: p.stack for s, p in sorted(self._players.items())}

    @property
    def actions(self) -> int:
        """Voluntary actions this hand (blinds and antes do not count)."""
        return self._hand.actions if self._hand else 0

    @property
    def substantial_action(self) -> bool:
        """Has substantial action occurred (000 §36; 003 art. 47 'two actions')?"""
        hand = self._hand
        if hand is None:
            return False
        if self.profile.substantial_action == "two-actions":
            return hand.actions >= 2
        return hand.actions >= 3 or (hand.actions >= 2 and hand.chip_actions >= 1)

    @property
    def on_hold(self) -> str | None:
        """The kind of irregularity holding the hand ('needs floor'), or None."""
        return self._hold.kind if self._hold else None

    @property
    def actor(self) -> int | None:
        return self._hand.game.actor if self._hand else None

    # -- feeding ---------------------------------------------------------
    def feed(self, obs: Observation) -> list[Event]:
        """Apply one observation; return the events it caused, in order."""
        out: list[Event] = []
        self.feed_into(obs, out)
        return out

    def feed_into(self, obs: Observation, out: list[Event]) -> None:
        if (self._hold is not None or self.paused) and not isinstance(obs, UNHELD):
            self._held.append(obs)       # nothing is lost: it is applied once the floor has ruled
            return
        getattr(self, "_on_" + type(obs).__name__)(obs, out)

    def _emit(self, out: list[Event], cls: type[Event], t: float, **fields) -> None:
        self.seq += 1
        out.append(cls(table=self.table, hand=self.hand_number, seq=self.seq, t=t, **fields))

    def _reject(self, out: list[Event], t: float, kind: str, procedure: str, *, rule: str = "",
                seats: tuple[int, ...] = (), cards: tuple[str, ...] = ()) -> None:
        self._emit(out, Irregularity, t, irregularity=kind, rule=rule, seats=seats, procedure=procedure,
                   cards=cards, substantial_action=self.substantial_action)

    def _irregular(self, out: list[Event], t: float, kind: str, detail: str, *, variant: str | None = None,
                   seats: tuple[int, ...] = (), cards: tuple[str, ...] = ()) -> None:
        """Report *kind* with the active house's rule and procedure; hold the hand if the floor must rule."""
        proc = procedure(kind, self.profile, variant)
        if kind in MISDEALS and self.substantial_action:
            proc = after_substantial_action(self.profile)
        self._emit(out, Irregularity, t, irregularity=kind, rule=proc.rule, seats=seats,
                   procedure=f"{detail}. {proc.en}", procedure_fr=proc.fr, options=proc.options,
                   needs_floor=bool(proc.options), cards=cards, substantial_action=self.substantial_action)
        if proc.options and self._hand is not None:
            self._hold = _Hold(kind, proc.rule, proc.options, seats, cards)

    def _on_Pause(self, obs: Pause, out: list[Event]) -> None:
        if obs.paused == self.paused:
            return self._reject(out, obs.t, "pause-unchanged", f"the table is already {'paused' if obs.paused else 'running'}")
        self.paused = obs.paused
        self._reject(out, obs.t, "table-paused" if obs.paused else "table-resumed",
                     (obs.reason or "by the TD") + ("; play waits" if obs.paused else ""), rule="000 §1")
        if not obs.paused and self._hold is None:
            held, self._held = self._held, []
            for waiting in held:
                self.feed_into(waiting, out)

    def _on_VoidHand(self, obs: VoidHand, out: list[Event]) -> None:
        if self._hand is None or obs.hand != self.hand_number:
            return self._reject(out, obs.t, "no-such-hand", f"hand {obs.hand} is not in progress "
                                f"(hand {self.hand_number} {'is' if self._hand else 'was the last'})")
        self._reject(out, obs.t, "hand-voided", f"the TD voided hand {obs.hand}: {obs.reason}; every bet "
                     "returned, the hand is replayed", rule="000 §1")
        self._hold = None
        self._held.clear()
        self._end_hand(obs.t, out, voided=True)
        self._replay = True

    def _on_Resolution(self, obs: Resolution, out: list[Event]) -> None:
        self._resolve(obs.t, obs.by, obs.decision, obs.card, out)

    def _resolve(self, t: float, by: str, decision: str, card: str | None, out: list[Event]) -> None:
        hold = self._hold
        if hold is None:
            return self._reject(out, t, "nothing-to-resolve", f"{by} resolution {decision!r}: no irregularity on hold")
        if decision not in hold.options:
            return self._reject(out, t, "bad-resolution", f"{decision!r} does not resolve {hold.kind}; "
                                f"choose one of {', '.join(hold.options)}", rule=hold.rule)
        hand = self._hand
        self._hold = None
        cards = hold.cards
        if decision in ("misdeal", "void-hand"):
            effect = ("misdeal: the hand is void and replayed exactly (000 §35C)" if decision == "misdeal"
                      else "the hand is void, every bet returned; the next hand is a replay")
            self._emit(out, IrregularityResolved, t, irregularity=hold.kind, rule=hold.rule, by=by,
                       decision=decision, effect=effect, cards=cards)
            self._end_hand(t, out, voided=True)
            self._replay = True
            self._held.clear()
            return
        if decision == "random-burn":
            extra = cards[3]
            if card is None:      # the floor's random pick, reproducible from the hand itself
                card = random.Random(f"{self.table}:{self.hand_number}:{self.seq}:{''.join(cards)}").choice(cards)
            if card not in cards:
                self._hold = hold
                return self._reject(out, t, "bad-resolution", f"{card} is not one of the four flop cards {cards}")
            if card != extra:
                hand.game.replace_board_card(card, extra)
                hand.placed[extra] = "board:flop"
            hand.placed[card] = "held-burn"
            effect = f"{card} is the turn's burn card; the flop is {' '.join(hand.game.board)}"
        elif decision == "return-card":
            for c in cards:
                hand.placed.pop(c, None)
            effect = f"{' '.join(cards)} back in the stub, reshuffled; dealt again without a new burn"
        elif decision == "discard":
            for c in cards:
                hand.placed[c] = "dead"
            effect = f"{' '.join(cards)} out of play"
        elif decision == "replace":
            hand.replace[hold.seats[0]] = cards[0]
            effect = f"seat {hold.seats[0]} gets the next card last; {cards[0]} will be the flop's burn card"
        else:   # give-card, continue
            effect = "the hand continues" if decision == "continue" else f"seat {hold.seats[0]} receives its missing card"
        self._emit(out, IrregularityResolved, t, irregularity=hold.kind, rule=hold.rule, by=by, decision=decision,
                   effect=effect, cards=cards)
        held, self._held = self._held, []
        for obs in held:
            self.feed_into(obs, out)

    # -- table -----------------------------------------------------------
    def _on_SeatPresence(self, obs: SeatPresence, out: list[Event]) -> None:
        if not 1 <= obs.seat <= self.profile.seats:
            return self._reject(out, obs.t, "unknown-seat", f"seat {obs.seat} does not exist at a "
                                f"{self.profile.seats}-seat table", seats=(obs.seat,))
        if obs.present:
            if self._hand and obs.seat in self._hand.game.order:
                return self._reject(out, obs.t, "seat-change-during-hand",
                                    f"seat {obs.seat} is in the hand; seat the player after it",
                                    seats=(obs.seat,))
            self._players[obs.seat] = _Player(obs.player, obs.stack, new=self._previous is not None)
        elif self._hand and obs.seat in self._hand.game.in_hand:
            self._reject(out, obs.t, "player-left", f"seat {obs.seat} left the table with a live hand: "
                         "the hand is dead, chips already in the pot are lost", rule="004 F.b",
                         seats=(obs.seat,))
        else:
            self._players.pop(obs.seat, None)

    def _on_SetLevel(self, obs: SetLevel, out: list[Event]) -> None:
        number = obs.number if obs.number is not None else self.level.number + 1
        self._pending_level = Level(number=number, small_blind=obs.small_blind, big_blind=obs.big_blind,
                                    ante=obs.ante, big_blind_ante=obs.big_blind_ante, minutes=self.level.minutes)
        # 000 §23: the new level starts with the next hand, never the one in progress.

    def _on_MoveButton(self, obs: MoveButton, out: list[Event]) -> None:
        if self._hand is not None:
            return self._reject(out, obs.t, "button-move-during-hand", "move the button between hands",
                                seats=(obs.seat,))
        if obs.seat not in self._players:
            return self._reject(out, obs.t, "button-on-empty-seat", f"seat {obs.seat} has no player",
                                seats=(obs.seat,))
        self._button = obs.seat
        self._previous = None

    def _on_ConsolePress(self, obs: ConsolePress, out: list[Event]) -> None:
        hold = self._hold
        if hold is not None and obs.button == "confirm":      # the dealer applies the procedure
            return self._resolve(obs.t, "dealer", hold.options[0], None, out)
        if hold is not None and obs.button == "misdeal" and "misdeal" in hold.options:
            return self._resolve(obs.t, "dealer", "misdeal", None, out)
        if hold is not None and obs.button == "new-hand":
            self._held.append(obs)
            return
        getattr(self, "_press_" + obs.button.replace("-", "_"))(obs.t, out)

    def _on_Declaration(self, obs: Declaration, out: list[Event]) -> None:
        if self._hand is None or obs.seat not in self._hand.game.in_hand:
            return self._reject(out, obs.t, "declaration-without-hand",
                                f"seat {obs.seat} has no live hand", seats=(obs.seat,))
        self._hand.declared[obs.seat] = obs

    # -- hand start and end ------------------------------------------------
    def _press_new_hand(self, t: float, out: list[Event]) -> None:
        if self._hand is not None:
            return self._reject(out, t, "hand-in-progress", f"hand {self.hand_number} is not over")
        occupied = [s for s, p in self._players.items() if p.stack > 0]
        try:
            if self._replay and self._previous is not None:
                positions = seating.replay_hand(self._previous)
            elif self._previous is not None:
                new = [s for s in occupied if self._players[s].new]
                positions = seating.next_hand(self._previous, occupied, self.profile.seats,
                                              self.profile.seating, new=new)
            elif self._button is not None:
                positions = seating.first_hand(occupied, self._button, self.profile.seats,
                                               self.profile.seating)
            else:
                return self._reject(out, t, "no-button", "place the button (draw for the button) first")
        except seating.SeatingError as exc:
            return self._reject(out, t, "cannot-start-hand", str(exc))
        replay = self._replay
        if not replay and self._pending_level is not None:
            self.level, self._pending_level = self._pending_level, None  # 000 §23
        level = self.level
        starting = {s: self._players[s].stack for s in positions.dealt_in}
        game = Game(positions.dealt_in, starting, small_blind=level.small_blind, big_blind=level.big_blind,
                    has_small_blind=positions.small_blind is not None, ante=level.ante,
                    big_blind_ante=level.big_blind_ante,
                    divmod=odd_chip_divmod(self.unit, self.profile.odd_chip == "left-of-button"))
        self.hand_number += 1
        self._replay = False
        self._button = None
        self._previous = positions
        for seat in positions.dealt_in:
            self._players[seat].new = False
        hand = self._hand = _Hand(game=game, positions=positions, starting=starting, level=level)
        hand.zone_amount = {s: game.bet(s) for s in positions.dealt_in}
        hand.zone_chips = {}   # the posted blinds' chips are unknown until the camera reports them
        self._emit(out, HandStarted, t, button=positions.button, small_blind_seat=positions.small_blind,
                   big_blind_seat=positions.big_blind, small_blind=level.small_blind,
                   big_blind=level.big_blind, ante=level.ante, big_blind_ante=level.big_blind_ante,
                   seats=positions.dealt_in, stacks=tuple(starting[s] for s in positions.dealt_in),
                   posted=tuple(starting[s] - game.stack(s) for s in positions.dealt_in),
                   waiting=positions.waiting, replay=replay, rules=positions.rules)

    def _denominations(self) -> tuple[int, ...]:
        values = tuple(c.value for c in self.profile.chips)
        return values if self.unit in values else values + (self.unit,)

    def _press_misdeal(self, t: float, out: list[Event]) -> None:
        hand = self._hand
        if hand is None:
            return self._reject(out, t, "no-hand", "no hand to declare a misdeal on")
        if self.substantial_action:
            return self._reject(out, t, "misdeal-after-substantial-action",
                                "substantial action has occurred: no misdeal, the hand continues",
                                rule="000 §35D")
        self._reject(out, t, "misdeal", "all cards back, same button, same blinds: the hand is replayed",
                     rule="000 §35C")
        self._end_hand(t, out, voided=True)
        self._replay = True

    def _press_floor(self, t: float, out: list[Event]) -> None:
        self._reject(out, t, "floor-called", "the dealer called the floor",
                     seats=(self.actor,) if self.actor else ())

    def _press_confirm(self, t: float, out: list[Event]) -> None:
        hand = self._hand
        if hand is None:
            return self._reject(out, t, "no-hand", "confirm pressed with no hand in progress")
        game = hand.game
        if game.actor is not None:
            seat = game.actor
            if not game.can_check(seat):
                return self._reject(out, t, "confirm-facing-bet",
                                    f"seat {seat} faces a bet: chips in the zone to call or raise, "
                                    "cards to the muck to fold", seats=(seat,))
            self._check(seat, t, out, "000 §3", "confirmed by the dealer")
        elif game.showdown_seat is not None:
            while game.showdown_seat is not None:
                self._show(game.showdown_seat, game.showdown_seat not in hand.mucked, t, out)
        else:
            return self._reject(out, t, "nothing-to-confirm", f"the table waits for {self._waiting_for()}")
        self._settle(t, out)

    def _end_hand(self, t: float, out: list[Event], *, voided: bool = False) -> None:
        hand = self._hand
        assert hand is not None
        stacks = dict(hand.starting) if voided else hand.game.stacks()
        for seat, bonus in hand.bonus.items():
            stacks[seat] += bonus
        for seat, stack in stacks.items():
            if seat in self._players:
                self._players[seat].stack = stack
        seats = tuple(stacks)
        self._emit(out, HandEnded, t, seats=seats, stacks=tuple(stacks[s] for s in seats),
                   carried=self.carried, voided=voided)
        self._hand = None

    # -- devices and deck integrity ---------------------------------------
    def _on_DeviceFault(self, obs: DeviceFault, out: list[Event]) -> None:
        self._reject(out, obs.t, f"device-fault:{obs.fault}",
                     f"{obs.device}: {obs.detail or obs.fault}; check the device, the hand continues only "
                     "when the dealer confirms every card was read")

    def _on_DeviceRecovered(self, obs: DeviceRecovered, out: list[Event]) -> None:
        self._reject(out, obs.t, "device-recovered", f"{obs.device}: {obs.detail or 'working again'}")

    def _on_ForeignCard(self, obs: ForeignCard, out: list[Event]) -> None:
        self._irregular(out, obs.t, "foreign-card", f"tag {obs.uid} read in {obs.zone} is in no registered deck")

    def _on_WrongBackCard(self, obs: WrongBackCard, out: list[Event]) -> None:
        self._irregular(out, obs.t, "wrong-back-card", f"{obs.card} of deck {obs.deck} (the other back) read in "
                        f"{obs.zone}", cards=(obs.card,))

    def _on_CardExposed(self, obs: CardExposed, out: list[Event]) -> None:
        """A card face up in a seat's card area. The camera does not say which: during the deal it
        is the card the seat was dealt last (it landed face up, and was seen before the seat's next
        card, a round later); once the deal is over no card is named, the seat's cards being secret."""
        hand = self._hand
        seat = zone_seat(obs.zone)
        if hand is None:
            return
        held = [c for c, s in hand.owner.items() if s == seat]  # in the order dealt
        card = obs.card if obs.card is not None else (held[-1] if held else None)
        if card is None or card not in held:
            return
        key = card if obs.card is not None or hand.game.expects_hole else obs.zone  # after the deal: per seat
        if key in hand.seen_up:
            return  # a card already reported face up is not a second one
        hand.seen_up.add(key)
        if hand.game.expects_hole:
            return self._dealer_exposed(obs.t, seat, card, out)
        if seat in hand.game.in_hand and hand.game.actor is not None:  # at showdown cards are shown
            named = (card,) if obs.card is not None else ()
            what = obs.card if obs.card is not None else "a card face up (camera)"
            self._irregular(out, obs.t, "player-exposed-cards", f"seat {seat} shows {what} while the action "
                            "is open", variant=None, seats=(seat,), cards=named)

    def _misplaced_hole_card(self, obs: CardEntered, out: list[Event]) -> None:
        """A hole card read where it does not belong (another seat, the board): it is exposed."""
        hand = self._hand
        seat = hand.owner[obs.card]
        if hand.game.expects_hole:
            return self._dealer_exposed(obs.t, seat, obs.card, out)
        if seat in hand.game.in_hand:
            self._irregular(out, obs.t, "player-exposed-cards", f"seat {seat}'s {obs.card} read in {obs.zone}",
                            seats=(seat,), cards=(obs.card,))

    def _dealer_exposed(self, t: float, seat: int, card: str, out: list[Event]) -> None:
        """A hole card exposed by the dealer during the deal (000 §35A5, 002 C.2, 004 H.a)."""
        hand = self._hand
        hand.exposed += 1
        first_two = hand.placed.get(card) and list(hand.owner).index(card) < 2
        if hand.exposed > 1 or first_two or self.profile.irregularities.exposed_card == "misdeal":
            why = "one of the first two cards" if first_two else ("a second card" if hand.exposed > 1 else "a card")
            return self._irregular(out, t, "exposed-card-misdeal", f"{why} ({card}) exposed by the dealer to seat "
                                   f"{seat}", seats=(seat,), cards=(card,))
        self._irregular(out, t, "exposed-card-replaced", f"{card} exposed by the dealer to seat {seat}",
                        seats=(seat,), cards=(card,))

    # -- cards -----------------------------------------------------------
    def _on_CardLeft(self, obs: CardLeft, out: list[Event]) -> None:
        """A card leaving a zone decides nothing: where it arrives does."""

    def _on_CardEntered(self, obs: CardEntered, out: list[Event]) -> None:
        hand = self._hand
        if hand is None:
            if obs.zone not in ("shoe", "muck"):   # cards gathered into the muck after a hand
                self._reject(out, obs.t, "card-without-hand", f"{obs.card} read in {obs.zone} between hands",
                             cards=(obs.card,))
            return
        kind = obs.zone.split(":")[0]
        previous = hand.placed.get(obs.card)
        if kind == "shoe":
            if previous not in (None, "held-burn"):
                return self._duplicate(obs, previous, out)
            hand.placed[obs.card] = "shoe"
            if obs.face_up and hand.game.expects_hole:
                hand.face_up_in_deck += 1
                if hand.face_up_in_deck == 2:
                    self._irregular(out, obs.t, "cards-face-up-in-deck", f"{obs.card} is the second card face up "
                                    "in the deck", cards=(obs.card,))
            return
        if kind == "muck":
            return self._muck(obs, out)
        if previous == "held-burn" and kind == "burn":
            previous = None
        if previous not in (None, "shoe"):
            if kind == "seat" and hand.replace.get(zone_seat(obs.zone)) == obs.card:
                pass
            elif obs.card in hand.owner and previous.startswith("seat:") and obs.zone != previous:
                return self._misplaced_hole_card(obs, out)
            else:
                return self._duplicate(obs, previous, out)
        if kind == "seat":
            self._hole(obs, zone_seat(obs.zone), out)
        elif kind == "burn":
            self._burn(obs, out)
        else:
            self._board(obs, obs.zone.split(":")[1], out)

    def _duplicate(self, obs: CardEntered, previous: str, out: list[Event]) -> None:
        self._irregular(out, obs.t, "duplicate-card", f"{obs.card} read in {obs.zone} but already in {previous}",
                        cards=(obs.card,))

    def _hole(self, obs: CardEntered, seat: int, out: list[Event]) -> None:
        hand = self._hand
        game = hand.game
        seats, cards = (seat,), (obs.card,)
        if seat not in game.order:
            return self._irregular(out, obs.t, "card-to-seat-not-dealt-in", f"{obs.card} went to seat {seat}, "
                                   "which is not dealt in", seats=seats, cards=cards)
        if seat in hand.replace:                     # 002 C.2: the replacement of an exposed card
            old = hand.replace.pop(seat)
            game.replace_hole_card(seat, old, obs.card)
            hand.placed[old] = "held-burn"
            del hand.owner[old]
            hand.placed[obs.card], hand.owner[obs.card] = obs.zone, seat
            self._emit(out, HoleCardDealt, obs.t, seat=seat, card=obs.card)
            return
        if hand.dealt == 0 and seat != game.order[0]:
            return self._irregular(out, obs.t, "first-card-wrong-seat", f"the first card went to seat {seat}, "
                                   f"not seat {game.order[0]} left of the button", seats=seats, cards=cards)
        if not game.expects_hole or len(game.hole(seat)) >= 2:
            return self._irregular(out, obs.t, "wrong-number-of-cards", f"{obs.card} is a third card for seat "
                                   f"{seat}", seats=seats, cards=cards)
        try:
            game.deal_hole(seat, obs.card)
        except GameError as exc:
            return self._reject(out, obs.t, "hole-card-refused", f"{obs.card} to seat {seat}: {exc}",
                                seats=seats, cards=cards)
        hand.dealt += 1
        hand.placed[obs.card] = obs.zone
        hand.owner[obs.card] = seat
        self._emit(out, HoleCardDealt, obs.t, seat=seat, card=obs.card)
        if obs.face_up:
            self._dealer_exposed(obs.t, seat, obs.card, out)
        self._settle(obs.t, out)
        if not game.expects_hole and hand.deferred and self._hold is None:
            deferred, hand.deferred = hand.deferred, []
            for held in deferred:
                self.feed_into(held, out)

    def _deal_incomplete(self, obs: Observation, out: list[Event]) -> bool:
        """Play went on before every seat had two cards: 000 §35A4, §37; 002 C.2; 003 art. 77."""
        hand = self._hand
        game = hand.game
        if hand.dealt == 2 * len(game.order) or not game.expects_hole:
            return False
        short = tuple(s for s in game.order if len(game.hole(s)) < 2)
        button = game.order[-1]
        if (short == (button,) and len(game.hole(button)) == 1
                and self.profile.irregularities.button_missing_card == "may-receive"):
            hand.deferred.append(obs)
            if self._hold is None and len(hand.deferred) == 1:
                self._irregular(out, obs.t, "button-short-a-card", f"the button, seat {button}, has one card",
                                seats=short)
            return True
        self._irregular(out, obs.t, "wrong-number-of-cards", "the deal ended with seat(s) "
                        f"{', '.join(map(str, short))} short of cards", seats=short)
        return True

    def _close_round(self, t: float, out: list[Event]) -> bool:
        """Imply the checks of a round nobody bet in (the street closes); False if someone faces a bet."""
        game = self._hand.game
        while game.actor is not None:
            if not game.can_check(game.actor):
                return False
            self._check(game.actor, t, out, "000 §3", "implied: the street closed")
        self._settle(t, out)
        return True

    def _burn(self, obs: CardEntered, out: list[Event]) -> None:
        hand = self._hand
        game = hand.game
        if self._deal_incomplete(obs, out):
            return
        if game.actor is not None and not self._close_round(obs.t, out):
            return self._premature(obs, out)
        if not game.expects_burn:      # 002 C.3: the card goes back on the stub, the next street's burn
            hand.placed.pop(obs.card, None)
            return self._irregular(out, obs.t, "extra-burn", f"{obs.card} burned when no burn is due",
                                   cards=(obs.card,))
        street = ("flop", "turn", "river")[len(game.board) and len(game.board) - 2]
        game.burn(obs.card)
        hand.placed[obs.card] = obs.zone
        self._emit(out, CardBurned, obs.t, street=street, card=obs.card)

    def _premature(self, obs: CardEntered, out: list[Event]) -> None:
        """A board or burn card while the betting round is open (003 art. 76, TDA RP-5, 002 C.3)."""
        hand = self._hand
        before_action = hand.game.street == "preflop" and hand.actions == 0
        if before_action and self.profile.irregularities.premature_card == "art-76" and self.substantial_action:
            before_action = False
        self._irregular(out, obs.t, "premature-flop-before-action" if before_action else "premature-card",
                        f"{obs.card} read in {obs.zone} while seat {hand.game.actor} still has to act",
                        variant=self.profile.irregularities.premature_card, seats=(hand.game.actor,),
                        cards=(obs.card,))

    def _board(self, obs: CardEntered, street: str, out: list[Event]) -> None:
        hand = self._hand
        game = hand.game
        if self._deal_incomplete(obs, out):
            return
        if (street == "flop" and len(game.board) == 3 and hand.flop_actions == hand.actions
                and not hand.board_buffer):
            flop = game.board
            hand.placed[obs.card] = obs.zone
            return self._irregular(out, obs.t, "four-card-flop", f"a fourth card {obs.card} reached the flop",
                                   cards=(*flop, obs.card))
        if game.actor is not None and not self._close_round(obs.t, out):
            return self._premature(obs, out)
        due = {0: "flop", 3: "turn", 4: "river"}.get(len(game.board))
        if street != due or not (game.expects_burn or game.board_count_expected):
            return self._reject(out, obs.t, "card-to-wrong-board-spot",
                                f"{obs.card} read on the {street} spot; the {due or 'board is complete'}",
                                rule="003 art. 76", cards=(obs.card,))
        if game.expects_burn:
            variant = self.profile.irregularities.missed_burn
            self._irregular(out, obs.t, "missed-burn", f"the {street} came without a burn card", variant=variant,
                            cards=(obs.card,))
            if variant == "art-76":          # the card opened unburnt becomes the burn card
                game.burn(obs.card)
                hand.placed[obs.card] = "burn"
                self._emit(out, CardBurned, obs.t, street=street, card=obs.card)
                return
            game.burn(None)
        hand.board_buffer.append(obs.card)
        hand.placed[obs.card] = obs.zone
        if len(hand.board_buffer) < BOARD_SIZES[street]:
            return
        cards, hand.board_buffer = tuple(hand.board_buffer), []
        try:
            game.deal_board(cards)
        except GameError as exc:
            return self._reject(out, obs.t, "board-refused", str(exc), cards=cards)
        if street == "flop":
            hand.flop_actions = hand.actions
        self._emit(out, BoardDealt, obs.t, street=street, cards=cards)
        self._settle(obs.t, out)

    def _muck(self, obs: CardEntered, out: list[Event]) -> None:
        hand = self._hand
        game = hand.game
        seat = hand.owner.get(obs.card)
        if seat is None or seat not in game.in_hand:
            hand.placed[obs.card] = "muck"
            return
        if self._deal_incomplete(obs, out):
            return
        hand.placed[obs.card] = "muck"
        if game.showdown_seat is not None:
            hand.mucked.add(seat)
            while game.showdown_seat in hand.mucked:
                self._show(game.showdown_seat, False, obs.t, out)
            return self._settle(obs.t, out)
        if seat != game.actor:
            return self._out_of_turn(seat, obs, out)
        street = self._street()
        try:
            game.fold()
        except GameError as exc:
            hand.placed[obs.card] = f"seat:{seat}"   # still the seat's card
            return self._reject(out, obs.t, "fold-refused", f"seat {seat}: {exc}", rule="000 §58", seats=(seat,))
        hand.actions += 1
        self._emit(out, ActionTaken, obs.t, seat=seat, action="fold", street=street, total=0,
                   added=0, rule="000 §3", reason="cards reached the muck")
        self._after_action(obs.t, out)

    # -- chips -----------------------------------------------------------
    def _on_ChipsInZone(self, obs: ChipsInZone, out: list[Event]) -> None:
        hand = self._hand
        if obs.zone == "pot":
            return
        seat = zone_seat(obs.zone)
        if hand is None:
            if obs.amount:
                self._reject(out, obs.t, "chips-without-hand", f"{obs.amount} in {obs.zone} between hands",
                             seats=(seat,))
            return
        before = hand.zone_amount.get(seat, 0)
        if obs.amount <= before:
            hand.zone_amount[seat], hand.zone_chips[seat] = obs.amount, obs.chips
            return
        if self._deal_incomplete(obs, out):
            return
        if seat not in hand.game.in_hand:
            return self._reject(out, obs.t, "chips-from-seat-not-in-hand",
                                f"{obs.amount} in {obs.zone}, but seat {seat} has no live hand", seats=(seat,))
        if seat != hand.game.actor:
            return self._out_of_turn(seat, obs, out)
        self._push(seat, obs, out)

    def _push(self, seat: int, obs: ChipsInZone, out: list[Event]) -> None:
        hand = self._hand
        game = hand.game
        before = hand.zone_amount.get(seat, 0)
        new = added(obs.chips, hand.zone_chips.get(seat, ()), before) if obs.chips else None
        if new is None or sum(new) != obs.amount - before:
            try:
                new = tuple(v for v, n in breakdown(obs.amount - before, self._denominations()) for _ in range(n))
            except ValueError as exc:
                return self._reject(out, obs.t, "chips-unreadable", f"seat {seat}: {exc}: the dealer "
                                    "confirms the amount", seats=(seat,))
        declared = hand.declared.pop(seat, None)
        bets = [game.bet(s) for s in game.order]
        highest = max(bets)
        situation = betting.Situation(
            street=self._street(), big_blind=game.big_blind, highest_bet=highest, own_bet=game.bet(seat),
            stack=game.stack(seat), last_increment=game.last_increment,
            previous_bet=game.last_full_bet, may_raise=game.may_raise())
        push = betting.Push(chips=new, declared=declared.declared if declared else None,
                            declared_amount=declared.amount if declared else None)
        try:
            ruling = betting.rule(situation, push, self.profile.betting)
            if ruling.kind in ("check", "call"):
                game.check_or_call()
            else:
                game.raise_to(ruling.total)
        except (betting.BettingError, GameError) as exc:
            return self._reject(out, obs.t, "push-refused", f"seat {seat} pushed {sum(new)}: {exc}",
                                seats=(seat,))
        hand.zone_amount[seat] = max(obs.amount, ruling.total)
        hand.zone_chips[seat] = obs.chips
        hand.actions += 1
        hand.chip_actions += ruling.kind != "check"
        self._emit(out, ActionTaken, obs.t, seat=seat, action=ruling.kind, street=situation.street,
                   total=ruling.total, added=ruling.total - situation.own_bet, all_in=ruling.all_in,
                   returned=ruling.returned, owed=ruling.owed, rule=ruling.rule, reason=ruling.reason)
        self._after_action(obs.t, out)

    def _check(self, seat: int, t: float, out: list[Event], rule: str, reason: str) -> None:
        hand = self._hand
        street, total = self._street(), hand.game.bet(seat)
        hand.game.check_or_call()
        hand.actions += 1
        self._emit(out, ActionTaken, t, seat=seat, action="check", street=street, total=total,
                   added=0, rule=rule, reason=reason)

    def _out_of_turn(self, seat: int, obs: Observation, out: list[Event]) -> None:
        """An action by a seat not in turn: imply the checks before it, or hold it for its turn."""
        game = self._hand.game
        while game.actor is not None and game.actor != seat and game.can_check(game.actor):
            self._check(game.actor, obs.t, out, "000 §3", f"implied: seat {seat} acted next")
        if game.actor == seat:
            return self.feed_into(obs, out)
        self._hand.pending[seat] = obs

    def _after_action(self, t: float, out: list[Event]) -> None:
        self._settle(t, out)
        hand = self._hand
        if hand is not None and self._hold is None and hand.game.actor in hand.pending:
            self.feed_into(hand.pending.pop(hand.game.actor), out)

    # -- showdown and pots -----------------------------------------------
    def _show(self, seat: int, show: bool, t: float, out: list[Event]) -> None:
        hand = self._hand
        hand.game.show(show)
        if show:
            hand.shown.add(seat)
            self._emit(out, HandShown, t, seat=seat, cards=hand.game.hole(seat), rank=hand.game.rank(seat))

    def _settle(self, t: float, out: list[Event]) -> None:
        """Let pokerkit finish what needs no observation: all-in showdown, pots, hand end."""
        hand = self._hand
        if hand is None:
            return
        game = hand.game
        if game.all_in_runout:
            while game.showdown_seat is not None:  # 000 §16: all-in hands are tabled
                self._show(game.showdown_seat, True, t, out)
        if game.actor is None and game.pots_due:      # pots are due only once the betting is over
            for pot in game.push_pots():
                self._award(pot, t, out)
        if game.over:
            self._end_hand(t, out)

    def _award(self, pot, t: float, out: list[Event]) -> None:
        amounts = list(pot.amounts)
        carried_in = self.carried if pot.pot == 0 else 0
        if carried_in:
            share, rest = odd_chip_divmod(self.unit, False)(carried_in, len(amounts))
            amounts = [a + share for a in amounts]
            for seat in pot.winners:
                self._hand.bonus[seat] = self._hand.bonus.get(seat, 0) + share
            self.carried = rest
        self.carried += pot.withheld
        rule = "004 B.b" if self.profile.odd_chip == "next-pot" else "000 §20A"
        self._emit(out, PotAwarded, t, pot=pot.pot, amount=pot.amount + carried_in, seats=pot.seats,
                   winners=pot.winners, amounts=tuple(amounts), ranks=pot.ranks,
                   odd_chip_rule=rule if len(pot.winners) > 1 else "", carried=self.carried)

    # -- helpers ---------------------------------------------------------
    def _street(self) -> str:
        return self._hand.game.street

    def _waiting_for(self) -> str:
        game = self._hand.game
        if game.expects_hole:
            return "hole cards"
        if game.expects_burn:
            return "the burn card"
        if game.board_count_expected:
            return "board cards"
        return "the next observation"
