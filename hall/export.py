"""A table's archived events told back: its finished hands, and each as a PHH record."""
from __future__ import annotations

from typing import Any

from pokerkit import HandHistory

from hall.histories import Hand, finished_hands, to_phh
from hall.store.sql import SqlStore


def hands(store: SqlStore, table: str, since: float | None = None, until: float | None = None) -> list[Hand]:
    """*table*'s finished hands in the store (published between *since* and *until*), oldest first."""
    return finished_hands(store.events(table, since, until))


def sessions(store: SqlStore, table: str) -> dict[str, dict[str, Any]]:
    """What each journal session of *table* said in its birth: house profile, smallest chip."""
    return {b["session"]: b for b in store.births(table)}


def histories(store: SqlStore, table: str, since: float | None = None,
              until: float | None = None) -> list[HandHistory]:
    """*table*'s finished hands as PHH records, with the house and smallest chip of their session."""
    births = sessions(store, table)
    out = []
    for hand in hands(store, table, since, until):
        birth = births.get(hand.session, {})
        out.append(to_phh(hand, birth.get("profile"), birth.get("chip_unit")))
    return out
