"""The tamper evidence: each table's stored messages form a hash chain.

Link *n* of a table holds the hash of link *n - 1* and its own hash over that and its content, so
changing, removing or reordering any stored row breaks the chain from there on. Pure.

>>> h1 = link_hash("", "t1", "secure-event", "t1-s-1", '{"a":1}')
>>> h2 = link_hash(h1, "t1", "secure-event", "t1-s-2", '{"a":2}')
>>> len(h2), h2 != link_hash(h1, "t1", "secure-event", "t1-s-2", '{"a":3}')
(64, True)
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

GENESIS = ""
"""The hash before a table's first link."""


def link_hash(prev: str, table: str, topic: str, msg_id: str, payload: str) -> str:
    """SHA-256 (hex) of the previous link's hash and this link's table, topic, id and payload text."""
    text = "\n".join((prev, table, topic, msg_id, payload))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Link:
    """One stored row as the chain sees it."""

    table: str
    link: int
    topic: str
    msg_id: str
    payload: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class Break:
    """The first broken link of a table: where, and why."""

    table: str
    link: int
    msg_id: str
    reason: str

    def __str__(self) -> str:
        return f"table {self.table}: link {self.link} (message {self.msg_id}) is broken: {self.reason}"


def first_break(table: str, links: Iterable[Link]) -> Break | None:
    """The first broken link of *table*'s chain (*links* in link order), or None when it holds."""
    prev, expected = GENESIS, 1
    for row in links:
        if row.link != expected:
            return Break(table, expected, row.msg_id, f"link {expected} is missing (next stored is {row.link})")
        if row.prev_hash != prev:
            return Break(table, row.link, row.msg_id, "it does not hold the hash of the link before")
        if link_hash(prev, row.table, row.topic, row.msg_id, row.payload) != row.hash:
            return Break(table, row.link, row.msg_id, "its content does not match its hash (changed after storing)")
        prev, expected = row.hash, expected + 1
    return None
