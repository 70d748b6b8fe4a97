"""Hand-for-hand from the tables' own hand ends (pure).

The TD starts it: every table pauses at the end of its current hand (at once if it is between hands);
the room shows which tables are ``done``; when every table is, they all resume together and the next
round begins; each pauses again at the end of that hand. Stopping resumes every table it paused.
(TDA Rule 21 practice; the houses' rulebooks leave the procedure to the TD: 000 §1.)

:class:`HandForHand` only decides: its methods answer the :class:`Order` list to send (``pause`` of one
table, ``resume`` of all), which the server sends through the signed command path.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

REASON = "hand-for-hand"


@dataclass(frozen=True)
class Order:
    """Pause (*paused* true) or resume *tables*."""

    tables: tuple[str, ...]
    paused: bool


@dataclass
class HandForHand:
    active: bool = False
    round: int = 0
    since: float | None = None
    tables: dict[str, Literal["playing", "done"]] = field(default_factory=dict)

    def view(self) -> dict[str, Any]:
        """docs/dashboard.md ``h4h``."""
        return {"active": self.active, "round": self.round, "tables": dict(self.tables), "since": self.since}

    def start(self, tables: dict[str, bool], now: float) -> list[Order]:
        """Start with *tables* (table -> in a hand now). Tables between hands pause at once."""
        if self.active or not tables:
            return []
        self.active, self.round, self.since = True, 1, now
        self.tables = {name: "playing" if in_hand else "done" for name, in_hand in sorted(tables.items())}
        done = tuple(n for n, s in self.tables.items() if s == "done")
        return [Order(done, True)] + self._all_done() if done else []

    def hand_ended(self, table: str) -> list[Order]:
        """*table* finished a hand: it pauses; if it was the last one playing, every table resumes."""
        if not self.active or self.tables.get(table) != "playing":
            return []
        self.tables[table] = "done"
        return [Order((table,), True)] + self._all_done()

    def stop(self) -> list[Order]:
        """End hand-for-hand: every table it holds resumes."""
        if not self.active:
            return []
        held = tuple(n for n, s in self.tables.items() if s == "done")
        self.active, self.since, self.tables = False, None, {}
        return [Order(held, False)] if held else []

    def _all_done(self) -> list[Order]:
        if any(s == "playing" for s in self.tables.values()):
            return []
        self.round += 1
        self.tables = dict.fromkeys(self.tables, "playing")
        return [Order(tuple(self.tables), False)]
