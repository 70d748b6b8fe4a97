"""The journal and the outbox carry their schema version; a rollback that cannot read them says so (issue 17)."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_host.service import journal, outbox
from firmware_host.service.journal import Journal
from firmware_host.service.outbox import Outbox
from firmware_host.service.schema import SchemaError
from mqtt_helpers import write_config

TABLECTL = Path(sys.executable).with_name("tablectl")


def version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def bump(path: Path, to: int) -> None:
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {to}")
    db.close()


def test_new_files_are_stamped_with_the_release_schema(tmp_path):
    Journal(tmp_path / "j.sqlite", "t1").close()
    Outbox(tmp_path / "o.sqlite", 100_000).close()
    assert version(tmp_path / "j.sqlite") == journal.SCHEMA_VERSION >= 1
    assert version(tmp_path / "o.sqlite") == outbox.SCHEMA_VERSION >= 1


def test_files_from_before_the_stamp_are_read_and_stamped(tmp_path):
    j = Journal(tmp_path / "j.sqlite", "t1")
    session = j.session
    j.close()
    bump(tmp_path / "j.sqlite", 0)                       # as written before versions were stamped
    again = Journal(tmp_path / "j.sqlite", "t1")
    assert again.session == session
    again.close()
    assert version(tmp_path / "j.sqlite") == journal.SCHEMA_VERSION


@pytest.mark.parametrize("kind", ["journal", "outbox"])
def test_a_newer_file_is_refused_untouched(tmp_path, kind):
    path = tmp_path / f"{kind}.sqlite"
    (Journal(path, "t1") if kind == "journal" else Outbox(path, 100_000)).close()
    bump(path, 99)
    with pytest.raises(SchemaError, match=rf"{kind} .*{kind}.sqlite: written with schema version 99; "
                                          r"this release reads up to 1"):
        Journal(path, "t1") if kind == "journal" else Outbox(path, 100_000)
    assert version(path) == 99                           # not downgraded, not rewritten


def test_tablectl_run_on_a_newer_journal_exits_with_the_reason(tmp_path):
    config = write_config(tmp_path, 1)                   # never reaches the broker: the journal is opened first
    Journal(tmp_path / "journal.sqlite", "t1").close()
    bump(tmp_path / "journal.sqlite", 7)
    done = subprocess.run([str(TABLECTL), "run", "--config", str(config), "--source", "demo"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "journal.sqlite: written with schema version 7; this release reads up to 1" in done.stderr
