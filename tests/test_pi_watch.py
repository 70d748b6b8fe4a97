"""``tablectl watch TABLE``: the technician's live view, from the shipped broker's public tree (issue 17)."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware_host.mqtt.watch import TableView
from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from mqtt_helpers import shipped_broker, user, write_config
from system_tools import ctrl_c_default

TABLECTL = Path(sys.executable).with_name("tablectl")


@pytest.fixture
def hall(tmp_path):
    broker = shipped_broker(tmp_path / "broker").start()
    password = tmp_path / "public-password"
    password.write_text(user("public")["password"] + "\n")
    yield broker, password
    broker.stop()


def watch(port: int, password: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(TABLECTL), "watch", "t1", "--port", str(port), "--username", "public",
                             "--password-file", str(password), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_default)


def play(tmp_path: Path, port: int) -> Service:
    """The demo session played by table t1 into the broker, every message acknowledged."""
    service = Service(load_config(write_config(tmp_path / "c", port, **user("table-t1")))).start()
    service.feed_from(demo_source(0))
    service.run(drain_timeout=20)
    return service


def test_once_prints_the_retained_state_of_the_table(tmp_path, hall):
    broker, password = hall
    service = play(tmp_path, broker.port)
    try:
        done = watch(broker.port, password, "--once", "--timeout", "10")
        out, err = done.communicate(timeout=30)
    finally:
        service.close()
    assert done.returncode == 0, err
    assert out.startswith("table t1  ")
    assert "hand 2  between hands  street turn" in out and "board 4c 7c Ac 2h" in out
    assert "   3    13900" in out                                  # seat 3's stack after hand 2
    assert "open irregularities (0): none" in out


def test_count_follows_a_live_table_with_its_irregularity_and_no_hole_card(tmp_path, hall):
    broker, password = hall
    viewer = watch(broker.port, password, "--count", "90", "--timeout", "60", "--events", "50")
    time.sleep(1.0)                                             # subscribed before the table plays
    service = play(tmp_path, broker.port)
    try:
        out, err = viewer.communicate(timeout=90)
    finally:
        service.close()
    assert viewer.returncode == 0, err
    assert "premature-card" in out and "000 §39" in out          # the demo's irregularity, then its resolution
    assert "NEW HAND" in out and "FLOP" in out
    assert re.search(r"seat \d+ dealt", out) is None            # hole cards never reach the public tree


def test_live_view_redraws_as_the_table_changes_until_interrupted(tmp_path, hall):
    broker, password = hall
    viewer = watch(broker.port, password)
    time.sleep(1.0)
    service = play(tmp_path, broker.port)
    service.close()
    time.sleep(1.0)
    viewer.send_signal(signal.SIGINT)
    out, err = viewer.communicate(timeout=30)
    assert viewer.returncode == 130 and "interrupted" in err
    views = out.split("table t1  ")[1:]
    assert 2 <= len(views) <= 60                # redrawn as things change, at most five times a second
    assert views[-1].startswith("STOPPED (demo)") and "board 4c 7c Ac 2h" in views[-1]


def test_nothing_within_the_timeout_is_an_error_naming_the_table(tmp_path, hall):
    broker, password = hall
    done = watch(broker.port, password, "--once", "--timeout", "1")
    out, err = done.communicate(timeout=30)
    assert done.returncode == 1
    assert f"no state from table t1 on 127.0.0.1:{broker.port} within 1 s" in err


def test_a_resolved_irregularity_is_no_longer_open_and_junk_is_counted():
    view = TableView("t1")
    base = {"table": "t1", "time": 0.0}
    irregular = {"kind": "irregularity", "hand": 3, "seq": 9, "irregularity": "exposed-card", "rule": "000 §35",
                 "seats": [4], "procedure": "show it", "needs_floor": False, "options": ["replace"], "t": 1.0,
                 "table": "t1", "cards": ["XX"]}
    view.feed("pokerhall/v1/table/t1/event", {**base, "event": irregular})
    assert "open irregularities (1):" in view.render(0) and "exposed-card seats 4  000 §35" in view.render(0)
    view.feed("pokerhall/v1/table/t1/event", {**base, "event": {**irregular, "kind": "irregularity-resolved",
                                                                 "seq": 10, "by": "dealer", "decision": "replace",
                                                                 "effect": "replaced"}})
    assert "open irregularities (0): none" in view.render(0)
    view.feed("pokerhall/v1/table/t1/event", b"\xff not json")
    view.feed("pokerhall/v1/table/t2/state", {"table": "t2"})
    assert view.bad == 2
