"""The journal: every observation, appended (and committed) before the engine sees it.

SQLite in WAL mode with ``synchronous=FULL``: an observation appended survives a
power cut. On start the journal is replayed into a fresh engine to rebuild the
hand (the engine is deterministic: the same events come back with the same seq).
The journal also keeps the command transaction ids already used.
"""
from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

from firmware_host import observations as obs_mod
from firmware_host.observations import Observation
from firmware_host.service.schema import check_version

SCHEMA_VERSION = 1
"""The layout of the journal file; a newer file is refused at start (:mod:`firmware_host.service.schema`)."""


class JournalError(RuntimeError):
    """The journal cannot be used (wrong table, corrupt entry)."""


class Journal:
    """An append-only log of observations, with the table id and a session id."""

    def __init__(self, path: str | Path, table: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            check_version(self._db, "journal", str(self.path), SCHEMA_VERSION)
        except Exception:
            self._db.close()
            raise
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS observations (n INTEGER PRIMARY KEY, origin TEXT NOT NULL,"
                             " body TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS txns (txn TEXT PRIMARY KEY, ts REAL NOT NULL)")
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
            if not meta:
                meta = {"table": table, "session": uuid.uuid4().hex[:8]}
                self._db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            self._db.execute("COMMIT")
        if meta["table"] != table:
            self._db.close()
            raise JournalError(f"journal {self.path} belongs to table {meta['table']!r}, not {table!r}")
        self.table = table
        self.session: str = meta["session"]
        """Random id of this journal: part of every event id, so a new journal never reuses one."""

    def append(self, observation: Observation, origin: str = "source") -> int:
        """Write *observation* durably; return its number (from 1)."""
        body = json.dumps(obs_mod.to_dict(observation), separators=(",", ":"))
        return self._int("INSERT INTO observations (origin, body) VALUES (?, ?) RETURNING n", origin, body)

    def __len__(self) -> int:
        return self._int("SELECT COUNT(*) FROM observations")

    def count(self, origin: str) -> int:
        """How many observations came from *origin* (``source`` or ``command``)."""
        return self._int("SELECT COUNT(*) FROM observations WHERE origin = ?", origin)

    def _int(self, sql: str, *params: object) -> int:
        """The one integer *sql* gives."""
        return int(self._db.execute(sql, params).fetchone()[0])

    def replay(self) -> Iterator[tuple[int, str, Observation]]:
        """Every observation in order, as ``(number, origin, observation)``."""
        rows = self._db.execute("SELECT n, origin, body FROM observations ORDER BY n").fetchall()
        for n, origin, body in rows:
            try:
                yield n, origin, obs_mod.from_dict(json.loads(body))
            except (ValueError, TypeError) as exc:
                raise JournalError(f"{self.path}: observation {n} cannot be read: {exc}") from None

    def use_txn(self, txn: str, ts: float, *, forget_before: float) -> bool:
        """Record command transaction *txn*; False if it was already used. Forgets ids older than *forget_before*."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("DELETE FROM txns WHERE ts < ?", (forget_before,))
                self._db.execute("INSERT INTO txns VALUES (?, ?)", (txn, ts))
        except sqlite3.IntegrityError:
            return False
        return True

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
