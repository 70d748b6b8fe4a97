"""Every committed recording run as `tablectl run --recording` (the service: journal, engine with the
recording's house rules and smallest chip, outbox, publisher) into a real Mosquitto gives exactly its
``expected-events.jsonl`` on the secure tree (issue 14 item 6: pluribus-04 once gave 1,087 of 1,409
and stuck in hand 31); a damaged recording is one line and a non-zero exit (item 11)."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from firmware_host.cli.main import main
from firmware_host.hil.recording import load
from mqtt_helpers import Broker, Subscriber, dedupe, write_config

HERE = Path(__file__).parent
RECORDINGS = sorted(p.parent for p in (HERE / "recordings").glob("*/recording.json"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = Broker(tmp_path_factory.mktemp("broker")).start()
    yield b
    b.stop()


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_run_recording_publishes_exactly_the_expected_events(tmp_path, broker, path):
    table = load(path).table
    topic = f"pokerhall/v1/secure/table/{table}/event"
    with Subscriber(broker.port, [topic]) as sub:
        config = write_config(tmp_path, broker.port, table=table)
        code = main(["run", "--config", str(config), "--recording", str(path), "--speed", "max", "--exit-at-end"])
        assert code == 0
        want = [json.loads(line) for line in (path / "expected-events.jsonl").read_text().splitlines()]
        assert sub.wait_for(lambda s: len(dedupe(s.on(topic))) >= len(want), 20)
        assert [p["event"] for p in dedupe(sub.on(topic))] == want


def test_a_damaged_recording_is_one_line_and_a_non_zero_exit(tmp_path, capsys):
    damaged = tmp_path / "rec"
    shutil.copytree(HERE / "recordings" / "normal-showdown", damaged)
    packed = damaged / "streams.jsonl.gz"
    lines = gzip.decompress(packed.read_bytes()).decode().splitlines()
    packed.unlink()
    broken = '{"t": 1.0, "s": "shoe.rx", "d": "zz'                 # a line cut short by a power cut
    (damaged / "streams.jsonl").write_text("\n".join(lines[:10] + [broken] + lines[10:]) + "\n")
    config = write_config(tmp_path / "c", 1)
    assert main(["run", "--config", str(config), "--recording", str(damaged), "--exit-at-end"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "streams.jsonl:11: not JSON" in err[0]
