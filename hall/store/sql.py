"""One schema, two databases: the archive's tables and every query on them.

Writes are idempotent on the message id (``(topic, id)``: the same event comes on its topic once, and
its duplicates are dropped whatever ``replayed`` says); each table's rows form a hash chain
(:mod:`hall.chain`), extended under a lock on that table's chain head so that several workers can share
one database. Per stream (table, topic, boot) the store keeps how many messages it holds and the
highest ``seq``: their difference is what was lost (or is still on its way).

URLs: ``sqlite:///path/archive.sqlite`` (or a plain path), ``postgresql://user@host:port/db``.
"""
from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from hall.chain import GENESIS, Link, link_hash

T = TypeVar("T")
SCHEMA_VERSION = 1
GAP_TOPICS = frozenset({"secure-event", "event", "irregularity"})
"""Topics whose ``seq`` runs 1, 2, 3... per boot: a hole is a lost message (``status`` numbers otherwise)."""

DDL = (
    """CREATE TABLE IF NOT EXISTS messages (
        topic TEXT NOT NULL, id TEXT NOT NULL, table_id TEXT NOT NULL, boot TEXT NOT NULL, seq BIGINT NOT NULL,
        session TEXT, hand BIGINT, event_seq BIGINT, kind TEXT, payload TEXT NOT NULL,
        published DOUBLE PRECISION, received DOUBLE PRECISION NOT NULL, stored DOUBLE PRECISION NOT NULL,
        link BIGINT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL,
        PRIMARY KEY (topic, id))""",
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_chain ON messages (table_id, link)",
    "CREATE INDEX IF NOT EXISTS messages_stream ON messages (table_id, topic, boot, seq)",
    "CREATE INDEX IF NOT EXISTS messages_hand ON messages (table_id, topic, session, hand)",
    "CREATE TABLE IF NOT EXISTS chains (table_id TEXT PRIMARY KEY, link BIGINT NOT NULL, hash TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS streams (table_id TEXT NOT NULL, topic TEXT NOT NULL, boot TEXT NOT NULL,
        count BIGINT NOT NULL, max_seq BIGINT NOT NULL, PRIMARY KEY (table_id, topic, boot))""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS rejected (topic TEXT NOT NULL, payload TEXT NOT NULL, reason TEXT NOT NULL,
        received DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS alarms (key TEXT PRIMARY KEY, table_id TEXT NOT NULL, text TEXT NOT NULL,
        raised DOUBLE PRECISION NOT NULL, cleared DOUBLE PRECISION)""",
)


class StoreError(RuntimeError):
    """The store cannot be opened or used: the message says which and why."""


@dataclass(frozen=True)
class Incoming:
    """One message as received: where from, its envelope, its JSON text (canonical), when."""

    table: str
    topic: str
    msg_id: str
    boot: str
    seq: int
    payload: str
    published: float | None
    received: float
    session: str | None = None
    hand: int | None = None
    event_seq: int | None = None
    kind: str | None = None


@dataclass(frozen=True)
class Gap:
    """Messages a stream lacks: seq *first* .. *last* of (table, topic, boot)."""

    table: str
    topic: str
    boot: str
    first: int
    last: int

    def __str__(self) -> str:
        span = f"seq {self.first}" if self.first == self.last else f"seq {self.first}-{self.last}"
        return f"table {self.table}: {self.topic} of boot {self.boot}: {span} missing"


class SqlStore:
    """The archive on one database connection, made by *connect* (again after the connection is lost: the
    next call reconnects), of *dialect* ``sqlite`` or ``postgresql``. Closable; thread-safe (one lock)."""

    def __init__(self, connect: Callable[[], Any], dialect: str, where: str) -> None:
        self._connect, self.dialect, self.where = connect, dialect, where
        self._lock = threading.Lock()
        self._closed = False
        self._conn: Any = None
        row = self._transaction(self._create)
        if int(row[0]) > SCHEMA_VERSION:
            self.close()
            raise StoreError(f"{where}: written with schema version {row[0]}; this release reads up to "
                             f"{SCHEMA_VERSION}: upgrade tablectl")

    def _create(self) -> Any:
        if self.dialect == "postgresql":     # workers starting together: one creates, the others wait
            self._x("SELECT pg_advisory_xact_lock(7450021)")
        for statement in DDL:
            self._x(statement)
        self._x("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
                ("schema_version", str(SCHEMA_VERSION)))
        return self._x("SELECT value FROM meta WHERE key = ?", ("schema_version",)).fetchone()

    # -- plumbing -------------------------------------------------------------------
    def _x(self, sql: str, args: Sequence[Any] = ()) -> Any:
        if self.dialect == "postgresql":
            sql = sql.replace("?", "%s")
        return self._conn.execute(sql, tuple(args))

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            if self.dialect == "postgresql":
                sql = sql.replace("?", "%s")
            self._conn.cursor().executemany(sql, rows)

    def _transaction(self, work: Callable[[], T], write: bool = True) -> T:
        """*work* in one transaction (SQLite: BEGIN IMMEDIATE when it writes: chains extend one writer at a
        time); a lost connection is dropped, and the next call makes a new one."""
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.where}: the store is closed")
            if self._conn is None:
                self._conn = self._connect()
            try:
                if self.dialect == "sqlite":
                    self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                result = work()
                self._conn.commit()
                return result
            except BaseException:
                try:
                    self._conn.rollback()
                except Exception:      # the connection itself is gone
                    pass
                if self.dialect == "postgresql" and getattr(self._conn, "closed", False):
                    self._conn = None
                raise

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._transaction(lambda: list(self._x(sql, args).fetchall()), write=False)

    def _write(self, sql: str, args: Sequence[Any]) -> int:
        return self._transaction(lambda: int(self._x(sql, args).rowcount))

    # -- writing --------------------------------------------------------------------
    def add(self, batch: Sequence[Incoming], now: float) -> list[bool]:
        """Store *batch* in one transaction; which of its messages were new (False: a duplicate by id)."""
        return self._transaction(lambda: self._add(batch, now))

    def _add(self, batch: Sequence[Incoming], now: float) -> list[bool]:
        heads = self._heads(sorted({m.table for m in batch}))       # locked in one order
        held = self._existing([m.msg_id for m in batch])     # under the heads' locks: no one adds them now
        new, rows = [], []
        streams: dict[tuple[str, str, str], list[int]] = {}
        for m in batch:
            if (m.topic, m.msg_id) in held:
                new.append(False)
                continue
            held.add((m.topic, m.msg_id))
            new.append(True)
            link, prev = heads[m.table]
            digest = link_hash(prev, m.table, m.topic, m.msg_id, m.payload)
            heads[m.table] = (link + 1, digest)
            rows.append((m.topic, m.msg_id, m.table, m.boot, m.seq, m.session, m.hand, m.event_seq, m.kind,
                         m.payload, m.published, m.received, now, link + 1, prev, digest))
            if m.topic in GAP_TOPICS:
                count = streams.setdefault((m.table, m.topic, m.boot), [0, 0])
                count[0], count[1] = count[0] + 1, max(count[1], m.seq)
        self._many("INSERT INTO messages (topic, id, table_id, boot, seq, session, hand, event_seq, kind, payload, "
                   "published, received, stored, link, prev_hash, hash) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        self._many("INSERT INTO streams (table_id, topic, boot, count, max_seq) VALUES (?, ?, ?, ?, ?) "
                   "ON CONFLICT (table_id, topic, boot) DO UPDATE SET count = streams.count + excluded.count, "
                   "max_seq = CASE WHEN excluded.max_seq > streams.max_seq THEN excluded.max_seq "
                   "ELSE streams.max_seq END", [(*k, c, top) for k, (c, top) in streams.items()])
        self._many("UPDATE chains SET link = ?, hash = ? WHERE table_id = ?",
                   [(link, digest, table) for table, (link, digest) in heads.items()])
        return new

    def _existing(self, ids: Sequence[str], chunk: int = 400) -> set[tuple[str, str]]:
        found: set[tuple[str, str]] = set()
        unique = sorted(set(ids))
        for k in range(0, len(unique), chunk):
            part = unique[k:k + chunk]
            marks = ", ".join("?" * len(part))
            found.update((r[0], r[1]) for r in self._x(f"SELECT topic, id FROM messages WHERE id IN ({marks})", part))
        return found

    def _heads(self, tables: Sequence[str], chunk: int = 400) -> dict[str, tuple[int, str]]:
        """The chain heads of *tables* (sorted), made if new, locked in that order until the transaction ends
        (PostgreSQL: ``FOR UPDATE``; SQLite's ``BEGIN IMMEDIATE`` holds the whole file): two statements a chunk,
        not two a table."""
        heads: dict[str, tuple[int, str]] = {}
        # PostgreSQL sorts by byte (as Python does) and locks as it reads: every worker locks in one order
        order, lock = (' COLLATE "C"', " FOR UPDATE") if self.dialect == "postgresql" else ("", "")
        for k in range(0, len(tables), chunk):
            part = list(tables[k:k + chunk])
            values = ", ".join("(?, 0, ?)" for _ in part)
            self._x(f"INSERT INTO chains (table_id, link, hash) VALUES {values} ON CONFLICT (table_id) DO NOTHING",
                    [v for t in part for v in (t, GENESIS)])
            marks = ", ".join("?" for _ in part)
            for table, link, digest in self._x(f"SELECT table_id, link, hash FROM chains WHERE table_id IN ({marks}) "
                                               f"ORDER BY table_id{order}{lock}", part):
                heads[str(table)] = (int(link), str(digest))
        return heads

    def reject(self, topic: str, payload: str, reason: str, received: float) -> None:
        """Keep a message that breaks the contract apart, with why (it is never part of a chain)."""
        self._write("INSERT INTO rejected (topic, payload, reason, received) VALUES (?, ?, ?, ?)",
                    (topic, payload, reason, received))

    def raise_alarm(self, key: str, table: str, text: str, now: float) -> bool:
        """Record alarm *key* as open (False: it already was)."""
        return self._write("INSERT INTO alarms (key, table_id, text, raised) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT (key) DO UPDATE SET text = excluded.text, raised = excluded.raised, "
                           "cleared = NULL WHERE alarms.cleared IS NOT NULL", (key, table, text, now)) == 1

    def clear_alarm(self, key: str, now: float) -> bool:
        """Close alarm *key* (False: it was not open)."""
        return self._write("UPDATE alarms SET cleared = ? WHERE key = ? AND cleared IS NULL", (now, key)) == 1

    def open_alarms(self) -> list[tuple[str, str, str, float]]:
        """(key, table, text, raised) of every open alarm, oldest first."""
        return [(r[0], r[1], r[2], float(r[3])) for r in self._rows(
            "SELECT key, table_id, text, raised FROM alarms WHERE cleared IS NULL ORDER BY raised, key")]

    def rejected(self) -> list[tuple[str, str, str]]:
        """(topic, reason, payload) of the messages kept apart."""
        return [(r[0], r[1], r[2]) for r in self._rows("SELECT topic, reason, payload FROM rejected ORDER BY received")]

    # -- reading --------------------------------------------------------------------
    def tables(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT table_id FROM chains ORDER BY table_id")]

    def count(self, table: str | None = None) -> int:
        if table is None:
            return int(self._rows("SELECT COUNT(*) FROM messages")[0][0])
        return int(self._rows("SELECT COUNT(*) FROM messages WHERE table_id = ?", (table,))[0][0])

    def links(self, table: str, batch: int = 5000) -> Iterator[Link]:
        """*table*'s chain in link order (read in batches)."""
        after = 0
        while True:
            rows = self._rows("SELECT table_id, link, topic, id, payload, prev_hash, hash FROM messages "
                              "WHERE table_id = ? AND link > ? ORDER BY link LIMIT ?", (table, after, batch))
            for r in rows:
                yield Link(r[0], int(r[1]), r[2], r[3], r[4], r[5], r[6])
            if len(rows) < batch:
                return
            after = int(rows[-1][1])

    def gaps(self) -> list[Gap]:
        """Every stream's missing seq ranges (from 1 to the highest stored)."""
        short = self._rows("SELECT table_id, topic, boot FROM streams WHERE max_seq > count "
                           "ORDER BY table_id, topic, boot")
        out: list[Gap] = []
        for table, topic, boot in short:
            rows = self._rows(
                "SELECT prev + 1, seq - 1 FROM (SELECT seq, LAG(seq, 1, 0) OVER (ORDER BY seq) AS prev FROM messages "
                "WHERE table_id = ? AND topic = ? AND boot = ?) w WHERE seq > prev + 1 ORDER BY seq",
                (table, topic, boot))
            out += [Gap(table, topic, boot, int(a), int(b)) for a, b in rows]
        return out

    def events(self, table: str, since: float | None = None, until: float | None = None) -> list[dict[str, Any]]:
        """*table*'s engine events (the secure tree's, hole cards included) in event order, each with
        ``session`` (its journal session) added; *since*/*until* bound the publish time."""
        sql = ("SELECT payload FROM messages WHERE table_id = ? AND topic = 'secure-event'"
               + (" AND published >= ?" if since is not None else "")
               + (" AND published <= ?" if until is not None else "") + " ORDER BY session, event_seq")
        args: list[Any] = [table] + [v for v in (since, until) if v is not None]
        out = []
        for (text,) in self._rows(sql, args):
            payload = json.loads(text)
            out.append({**payload["event"], "session": _session(payload)})
        return out

    def ended(self, table: str, limit: int = 50) -> list[dict[str, Any]]:
        """*table*'s last *limit* ``hand-ended`` events, newest first, each with its ``session`` (an index
        read: the table page's list of finished hands)."""
        rows = self._rows("SELECT payload FROM messages WHERE table_id = ? AND topic = 'secure-event' "
                          "AND kind = 'hand-ended' ORDER BY link DESC LIMIT ?", (table, limit))
        return [{**(p := json.loads(text))["event"], "session": _session(p)} for (text,) in rows]

    def hand_events(self, table: str, session: str, hand: int) -> list[dict[str, Any]]:
        """The engine events of one hand (every deal of it), in order, each with its ``session``."""
        rows = self._rows("SELECT payload FROM messages WHERE table_id = ? AND topic = 'secure-event' "
                          "AND session = ? AND hand = ? ORDER BY event_seq", (table, session, hand))
        return [{**(p := json.loads(text))["event"], "session": _session(p)} for (text,) in rows]

    def latest(self, table: str, topics: Sequence[str], limit: int = 1000) -> list[tuple[str, dict[str, Any], float]]:
        """*table*'s last *limit* messages of *topics*, in the order they were stored: (topic, payload, received)."""
        marks = ", ".join("?" for _ in topics)
        rows = self._rows(f"SELECT topic, payload, received FROM messages WHERE table_id = ? AND topic IN ({marks}) "
                          "ORDER BY link DESC LIMIT ?", (table, *topics, limit))
        return [(topic, json.loads(text), float(received)) for topic, text, received in reversed(rows)]

    def births(self, table: str) -> list[dict[str, Any]]:
        """*table*'s birth messages, oldest first (house profile, journal session, software)."""
        return [json.loads(t) for (t,) in self._rows(
            "SELECT payload FROM messages WHERE table_id = ? AND topic = 'birth' ORDER BY published", (table,))]

    def latest_status(self, table: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT payload FROM messages WHERE table_id = ? AND topic = 'status' "
                          "ORDER BY published DESC, seq DESC LIMIT 1", (table,))
        return json.loads(rows[0][0]) if rows else None

    def commit_delays(self, table_prefix: str = "") -> list[float]:
        """Seconds from each message's publish to its storing (the benchmark's figure)."""
        return [float(s - p) for s, p in self._rows(
            "SELECT stored, published FROM messages WHERE published IS NOT NULL AND table_id LIKE ?",
            (table_prefix + "%",))]

    def span(self) -> tuple[float, float]:
        """The first publish and the last commit of the stored messages (seconds; 0, 0 when empty)."""
        row = self._rows("SELECT MIN(published), MAX(stored) FROM messages")[0]
        return (float(row[0]), float(row[1])) if row[0] is not None else (0.0, 0.0)

    def duplicated(self) -> int:
        """Messages stored more than once under another id: the same (table, topic, boot, seq) twice."""
        return int(self._rows("SELECT COUNT(*) - COUNT(DISTINCT table_id || ' ' || topic || ' ' || boot || ' ' || "
                              "CAST(seq AS TEXT)) FROM messages")[0][0])

    def close(self) -> None:
        """Close the connection. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._conn is not None:
                    self._conn.close()

    def __enter__(self) -> SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _session(payload: dict[str, Any]) -> str:
    """The journal session in an event's id ``<table>-<session>-<seq>``."""
    table, seq = payload["table"], payload["event"]["seq"]
    return str(payload["id"]).removeprefix(f"{table}-").removesuffix(f"-{seq}")


def open_store(url: str) -> SqlStore:
    """The store at *url* (``sqlite:///PATH``, a plain path, or ``postgresql://...``); StoreError if it
    cannot be opened, naming it and why."""
    if url.startswith(("postgresql://", "postgres://")):
        try:
            import psycopg
        except ImportError:
            raise StoreError(f"{url}: PostgreSQL needs psycopg: pip install 'pokertable[hall]'") from None

        def connect_postgresql() -> Any:
            try:
                return psycopg.connect(url, connect_timeout=10)
            except psycopg.Error as exc:
                raise StoreError(f"{_redact(url)}: cannot connect: {str(exc).strip()}") from None
        return SqlStore(connect_postgresql, "postgresql", _redact(url))
    path = Path(url.removeprefix("sqlite://")) if url.startswith("sqlite://") else Path(url)
    if not path.parent.is_dir():
        raise StoreError(f"{path}: its directory {path.parent} does not exist")

    def connect() -> Any:
        try:
            lite = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            lite.execute("PRAGMA journal_mode=WAL")
            lite.execute("PRAGMA synchronous=FULL")     # a message is acknowledged to the broker after this
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: cannot open: {exc}") from None
        return _SqliteConn(lite)
    return SqlStore(connect, "sqlite", str(path))


class _SqliteConn:
    """sqlite3 in autocommit mode with explicit BEGIN: the same commit/rollback calls as psycopg's."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._conn.execute(sql, args)

    def cursor(self) -> sqlite3.Cursor:
        return self._conn.cursor()

    def commit(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("COMMIT")

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def close(self) -> None:
        self._conn.close()


def _redact(url: str) -> str:
    """*url* without its password."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.split(':')[0]}@{tail}"
