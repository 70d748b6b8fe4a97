"""The outbox: every message to publish, on disk before it is sent, gone when the broker acknowledged it.

SQLite in WAL mode with ``synchronous=FULL``. Rows are read in order (``oid``);
a row with ``not_before`` in the future (broadcast delay) waits. The highest
engine ``seq`` ever enqueued is kept, so a journal replay after a crash does not
enqueue an event twice. Bounded by ``max_bytes``: :meth:`level` says how full.
"""
from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from firmware_host.service.schema import check_version

SCHEMA_VERSION = 1
"""The layout of the outbox file; a newer file is refused at start (:mod:`firmware_host.service.schema`)."""


class OutboxFull(RuntimeError):
    """A message that may be dropped (health, state) was refused: the outbox is full."""


@dataclass(frozen=True)
class Row:
    oid: int
    topic: str
    payload: str
    retain: bool
    not_before: float
    boot: str


Message = tuple[str, str, bool, float]
"""A message to put: ``(topic, payload, retain, not_before)``."""


class Outbox:
    """A durable FIFO of messages. Thread-safe (one connection, one lock)."""

    def __init__(self, path: str | Path, max_bytes: int) -> None:
        if max_bytes <= 0:
            raise ValueError("outbox max_bytes must be positive")
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            check_version(self._db, "outbox", str(self.path), SCHEMA_VERSION)
        except Exception:
            self._db.close()
            raise
        self._db.execute("CREATE TABLE IF NOT EXISTS outbox (oid INTEGER PRIMARY KEY AUTOINCREMENT,"
                         " topic TEXT NOT NULL, payload TEXT NOT NULL, retain INTEGER NOT NULL,"
                         " not_before REAL NOT NULL, boot TEXT NOT NULL)")
        self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value NOT NULL)")
        self._bytes = self._int("SELECT COALESCE(SUM(LENGTH(payload)), 0) FROM outbox")
        self.spilled = 0
        """Messages written beyond max_bytes (events are never dropped: see :meth:`put`)."""

    # -- writing ----------------------------------------------------------------
    def put(self, messages: list[Message], boot: str, *, event_seq: int | None = None,
            droppable: bool = False) -> list[int]:
        """Append ``(topic, payload, retain, not_before)`` messages in one transaction; return their oids.

        *event_seq* raises the high-water mark of engine events enqueued. A
        *droppable* batch is refused with :class:`OutboxFull` when it does not fit;
        events are always written (counted in :attr:`spilled` beyond the bound), as
        losing a hand event is worse than exceeding the bound: the alarm fires long before.
        """
        size = sum(len(p) for _, p, _, _ in messages)
        with self._lock:
            if self._bytes + size > self.max_bytes:
                if droppable:
                    raise OutboxFull(f"outbox {self.path} holds {self._bytes} of {self.max_bytes} bytes")
                self.spilled += len(messages)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                oids = [self._int("INSERT INTO outbox (topic, payload, retain, not_before, boot)"
                                  " VALUES (?, ?, ?, ?, ?) RETURNING oid", t, p, int(r), nb, boot)
                        for t, p, r, nb in messages]
                if event_seq is not None:
                    self._db.execute("INSERT INTO meta VALUES ('event_seq', ?) ON CONFLICT(key) DO UPDATE"
                                     " SET value = MAX(value, excluded.value)", (event_seq,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._bytes += size
            return oids

    def ack(self, oids: list[int]) -> None:
        """The broker has these: remove them."""
        if not oids:
            return
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                gone = 0
                for oid in oids:
                    row = self._db.execute("DELETE FROM outbox WHERE oid = ? RETURNING LENGTH(payload)",
                                           (oid,)).fetchone()
                    gone += row[0] if row else 0
                self._db.execute("INSERT INTO meta VALUES ('acked', ?) ON CONFLICT(key) DO UPDATE"
                                 " SET value = value + excluded.value", (len(oids),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._bytes -= gone

    # -- reading ----------------------------------------------------------------
    def pending(self, after: int = 0, limit: int = 500) -> list[Row]:
        """Up to *limit* rows with oid > *after*, in order (due or not)."""
        with self._lock:
            rows = self._db.execute("SELECT oid, topic, payload, retain, not_before, boot FROM outbox"
                                    " WHERE oid > ? ORDER BY oid LIMIT ?", (after, limit)).fetchall()
        return [Row(o, t, p, bool(r), nb, b) for o, t, p, r, nb, b in rows]

    def bind(self, session: str) -> None:
        """Tie the outbox to journal *session*: a new journal (new session) restarts the high-water mark."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'session'").fetchone()
            if row is None or row[0] != session:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('session', ?)", (session,))
                self._db.execute("DELETE FROM meta WHERE key = 'event_seq'")
                self._db.execute("COMMIT")

    @property
    def event_seq(self) -> int:
        """The highest engine seq ever enqueued (0: none)."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'event_seq'").fetchone()
        return int(row[0]) if row else 0

    def __len__(self) -> int:
        with self._lock:
            return self._int("SELECT COUNT(*) FROM outbox")

    def _int(self, sql: str, *params: object) -> int:
        """The one integer *sql* gives (the caller holds the lock, or is the constructor)."""
        return int(self._db.execute(sql, params).fetchone()[0])

    @property
    def bytes(self) -> int:
        return self._bytes

    def level(self) -> float:
        """How full: bytes held / max_bytes."""
        return self._bytes / self.max_bytes

    def close(self) -> None:
        with self._lock:
            self._db.close()
