"""The table between hands: who sits where, and how the next hand is placed."""
from __future__ import annotations

from dataclasses import dataclass, field

from firmware_host.rules import seating
from firmware_host.rules.profile import Level, Profile


@dataclass
class Player:
    """A seated player: name, stack between hands, and whether he sat down since the last hand."""

    name: str | None
    stack: int
    new: bool


@dataclass
class Lineup:
    """The table between hands: who sits where, and how the next hand is placed."""

    players: dict[int, Player] = field(default_factory=dict)
    button: int | None = None                   # placed by the TD, for the first hand
    previous: seating.Positions | None = None   # the last hand's positions
    replay: bool = False                        # the next hand is the exact replay of the last (000 §35C)
    next_level: Level | None = None             # the TD's new level, from the next hand (000 §23)

    def positions(self, profile: Profile) -> seating.Positions | None:
        """Where the next hand's button and blinds are; None with no button placed.

        :raises seating.SeatingError: when the seats cannot make a hand.
        """
        occupied = [s for s, p in self.players.items() if p.stack > 0]
        if self.replay and self.previous is not None:
            return seating.replay_hand(self.previous)
        if self.previous is not None:
            new = [s for s in occupied if self.players[s].new]
            return seating.next_hand(self.previous, occupied, profile.seats, profile.seating, new=new)
        if self.button is not None:
            return seating.first_hand(occupied, self.button, profile.seats, profile.seating)
        return None

    def hand_over(self, stacks: dict[int, int], voided: bool) -> None:
        """The hand is over with these *stacks*; a void hand is replayed next (000 §35C)."""
        for seat, stack in stacks.items():
            if seat in self.players:
                self.players[seat].stack = stack
        if voided:
            self.replay = True
