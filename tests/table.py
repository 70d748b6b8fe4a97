"""A scripted table for tests: observations as the hardware makes them, fed to a real engine."""
from __future__ import annotations

from firmware_host.events import ActionTaken, Event, HandEnded, Irregularity, PotAwarded
from firmware_host.observations import (
    DECK,
    CardEntered,
    ChipsInZone,
    ConsolePress,
    Declaration,
    MoveButton,
    SeatPresence,
    SetLevel,
)
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import builtin_profile


class Table:
    """Drives a :class:`HandEngine` with the observations a real table would produce."""

    def __init__(self, stacks: dict[int, int], *, button: int, blinds=(50, 100), ante=0, big_blind_ante=0,
                 profile="000", chip_unit=None):
        self.profile = builtin_profile(profile) if isinstance(profile, str) else profile
        self.engine = HandEngine(self.profile, "t-1", chip_unit=chip_unit)
        self.t = 0.0
        self.events: list[Event] = []
        self.zone: dict[int, dict[int, int]] = {}
        self.unused = list(DECK)
        for seat, stack in stacks.items():
            self.feed(SeatPresence(self.tick(), seat, True, player=f"p{seat}", stack=stack))
        self.feed(SetLevel(self.tick(), blinds[0], blinds[1], ante, big_blind_ante))
        self.feed(MoveButton(self.tick(), button))

    def tick(self) -> float:
        self.t += 1.0
        return self.t

    def feed(self, obs) -> list[Event]:
        out = self.engine.feed(obs)
        self.events.extend(out)
        return out

    # -- the hand --------------------------------------------------------
    def new_hand(self) -> list[Event]:
        self.zone = {}
        out = self.feed(ConsolePress(self.tick(), "new-hand"))
        started = out[-1]
        for seat, posted in zip(started.seats, started.posted):
            blind = posted - (started.ante if started.ante else 0)
            if started.big_blind_ante and seat == started.big_blind_seat:
                blind = posted - started.big_blind_ante
            if blind > 0:
                self.zone[seat] = {blind: 1}
        return out

    def take(self, card: str) -> str:
        if card in self.unused:       # a card may come back (a burn card chosen by the floor)
            self.unused.remove(card)
        return card

    def deal(self, holes: dict[int, str]) -> list[Event]:
        """Deal ``{seat: 'AsKd'}`` round-robin in the given seat order (shoe, then the seat's antenna)."""
        out = []
        for k in (0, 2):
            for seat, cards in holes.items():
                card = self.take(cards[k:k + 2])
                out += self.feed(CardEntered(self.tick(), "shoe", card))
                out += self.feed(CardEntered(self.tick(), f"seat:{seat}", card))
        self.holes = {s: (c[:2], c[2:]) for s, c in holes.items()}
        return out

    def push(self, seat: int, *chips: int, declared=None, amount=None) -> list[Event]:
        """Seat *seat* pushes these chips (one value per chip) into its bet zone."""
        out = []
        if declared:
            out += self.feed(Declaration(self.tick(), seat, declared, amount))
        zone = self.zone.setdefault(seat, {})
        for chip in chips:
            zone[chip] = zone.get(chip, 0) + 1
        pairs = tuple(sorted(zone.items(), reverse=True))
        out += self.feed(ChipsInZone(self.tick(), f"bet:{seat}", sum(v * n for v, n in pairs), pairs))
        return out

    def fold(self, seat: int) -> list[Event]:
        out = []
        for card in self.holes[seat]:
            out += self.feed(CardEntered(self.tick(), "muck", card))
        return out

    def confirm(self) -> list[Event]:
        return self.feed(ConsolePress(self.tick(), "confirm"))

    def press(self, button: str) -> list[Event]:
        return self.feed(ConsolePress(self.tick(), button))

    def sweep(self) -> list[Event]:
        out = []
        for seat in list(self.zone):
            out += self.feed(ChipsInZone(self.tick(), f"bet:{seat}", 0))
        self.zone = {}
        return out

    def board(self, street: str, cards: str, burn: str | None = None) -> list[Event]:
        out = self.sweep()
        burn = burn or next(c for c in self.unused if c not in cards)
        self.take(burn)
        out += self.feed(CardEntered(self.tick(), "shoe", burn))
        out += self.feed(CardEntered(self.tick(), "burn", burn))
        for k in range(0, len(cards), 2):
            card = self.take(cards[k:k + 2])
            out += self.feed(CardEntered(self.tick(), "shoe", card))
            out += self.feed(CardEntered(self.tick(), f"board:{street}", card))
        return out

    # -- reading ---------------------------------------------------------
    def actions(self, events=None) -> list[tuple]:
        return [(e.seat, e.action, e.total) for e in (events or self.events) if isinstance(e, ActionTaken)]

    def last_action(self) -> ActionTaken:
        return [e for e in self.events if isinstance(e, ActionTaken)][-1]

    def irregularities(self) -> list[Irregularity]:
        return [e for e in self.events if isinstance(e, Irregularity)]

    def awards(self) -> list[PotAwarded]:
        return [e for e in self.events if isinstance(e, PotAwarded)]

    def ended(self) -> HandEnded:
        return [e for e in self.events if isinstance(e, HandEnded)][-1]

    def final(self) -> dict[int, int]:
        ended = self.ended()
        return dict(zip(ended.seats, ended.stacks))
