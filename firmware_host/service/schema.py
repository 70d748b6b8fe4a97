"""The on-disk schema version of the journal and the outbox (SQLite's ``PRAGMA user_version``).

An update may change how they are stored; a rollback may then meet a file written by a
newer release. Each file carries the version it was written with, checked when it is
opened: an older one is brought up to date, a newer one is refused with a clear error
rather than misread (docs/deploy.md, "Update and roll back").

>>> import sqlite3
>>> db = sqlite3.connect(":memory:")
>>> check_version(db, "journal", "journal.sqlite", 1)
1
>>> _ = db.execute("PRAGMA user_version = 3")
>>> try:
...     check_version(db, "journal", "journal.sqlite", 1)
... except SchemaError as exc:
...     print(str(exc)[:82])
journal journal.sqlite: written with schema version 3; this release reads up to 1:
"""
from __future__ import annotations

import sqlite3


class SchemaError(RuntimeError):
    """A journal or outbox written by a newer release than this one."""


def check_version(db: sqlite3.Connection, kind: str, path: str, current: int) -> int:
    """Check the schema version of *db* (the *kind* file at *path*) against *current*; stamp it; return it.

    A file from before versions were stamped (0) has the layout of version 1.
    """
    found = int(db.execute("PRAGMA user_version").fetchone()[0])
    if found > current:
        raise SchemaError(f"{kind} {path}: written with schema version {found}; this release reads up to "
                          f"{current}: roll forward to the release that wrote it, or move the file aside "
                          f"(docs/deploy.md)")
    if found != current:
        db.execute(f"PRAGMA user_version = {int(current)}")
    return current
