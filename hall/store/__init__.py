"""Where the hall keeps every table's messages: one schema on SQLite (default: one file, nothing to
set up) or PostgreSQL (a hall: several archive workers, one database). :func:`open_store` by URL."""
from __future__ import annotations

from hall.store.sql import Incoming, SqlStore, StoreError, open_store

__all__ = ["Incoming", "SqlStore", "StoreError", "open_store"]
