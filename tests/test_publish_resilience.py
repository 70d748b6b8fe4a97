"""Nothing lost: the broker killed and restarted, the link cut for 30 s, the controller SIGKILLed mid-hand.
Each time every event arrives, in order, once after de-duplication, and validates."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from firmware_host.mqtt import contract as mc
from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from mqtt_helpers import Broker, Proxy, Subscriber, dedupe, shipped_broker, user, write_config
from test_publish import PUB, SEC, assert_no_secret_on_public, expected_streams

TABLECTL = Path(sys.executable).with_name("tablectl")


def check_complete(sub: Subscriber) -> None:
    """Every event once after de-duplication, in order; all payloads valid. A duplicate is the outbox's
    replay (marked ``replayed``) or MQTT's own QoS 1 redelivery: the very message again (a broker killed
    before its acknowledgement reached the table; consumers dedupe by id, docs/mqtt/README.md)."""
    secure, public = expected_streams()
    for topic, expected in ((PUB, public), (SEC, secure)):
        got = sub.on(topic)
        unique = dedupe(got)
        assert [p["event"] for p in unique] == expected, topic
        first: dict[str, dict] = {}
        for p in got:
            if p["id"] in first:
                assert p["replayed"] or p == first[p["id"]], f"a duplicate neither replayed nor the same: {p}"
            first.setdefault(p["id"], p)
    validator = mc.Validator()
    for topic, payload, _ in sub.messages:
        assert validator.errors(payload) == [], (topic, payload)
    assert_no_secret_on_public([m for m in sub.messages if not m[0].startswith(mc.SECURE_ROOT)], secure)


def run_in_thread(service: Service, speed: float) -> threading.Thread:
    service.feed_from(demo_source(speed))
    thread = threading.Thread(target=service.run, kwargs={"drain_timeout": 60}, daemon=True)
    thread.start()
    return thread


def test_broker_killed_mid_stream_and_restarted_5s_later(tmp_path):
    broker = shipped_broker(tmp_path / "broker").start()
    sub = Subscriber(broker.port, ["pokerhall/#"], persistent=True, **user("surveillance"))
    service = Service(load_config(write_config(tmp_path / "c", broker.port, **user("table-t1")))).start()
    try:
        thread = run_in_thread(service, speed=25)
        assert sub.wait_for(lambda s: len(s.on(PUB)) >= 15, 20)
        broker.kill()
        killed_at = len(sub.on(SEC))
        time.sleep(5)
        assert service.engine.seq > killed_at            # the controller kept going
        broker.start()
        thread.join(60)
        assert not thread.is_alive() and len(service.outbox) == 0
        assert service.publisher.stats["disconnects"] >= 1
        secure, _ = expected_streams()
        assert sub.wait_for(lambda s: len(dedupe(s.on(SEC))) >= len(secure), 20)
        check_complete(sub)
    finally:
        service.close()
        sub.close()
        broker.stop()


def test_link_cut_for_30s_then_everything_arrives_in_order(tmp_path):
    broker = Broker(tmp_path / "broker").start()
    proxy = Proxy(broker.port)
    sub = Subscriber(broker.port, ["pokerhall/#"])
    service = Service(load_config(write_config(tmp_path / "c", proxy.port))).start()
    try:
        thread = run_in_thread(service, speed=25)
        assert sub.wait_for(lambda s: len(s.on(PUB)) >= 15, 20)
        proxy.cut()
        # the broker sees the controller gone: its Last Will says offline
        assert sub.wait_for(lambda s: any(p["status"] == "offline" for p in s.on("/status")), 10)
        # issue 14 item 5: the Last Will outranks the same connection's online (docs/mqtt, "Status order")
        statuses = sub.on("/status")
        assert statuses[-1]["status"] == "offline"
        assert max(statuses, key=lambda p: p["seq"])["status"] == "offline"
        time.sleep(30)
        assert len(service.outbox) > 0 and not service.publisher.connected.is_set()
        proxy.restore()
        thread.join(60)
        assert not thread.is_alive() and len(service.outbox) == 0
        secure, _ = expected_streams()
        assert sub.wait_for(lambda s: len(dedupe(s.on(SEC))) >= len(secure), 20)
        check_complete(sub)
        statuses = [p["status"] for p in sub.on("/status")]
        assert statuses[-1] == "online" and "offline" in statuses
        seqs = [p["seq"] for p in sub.on("/status")]       # in the order delivered: a consumer keeping the
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)   # highest seq shows the latest status
        # retained topics were republished on reconnect
        assert len(sub.on("/birth")) >= 2
    finally:
        service.close()
        proxy.close()
        sub.close()
        broker.stop()


def test_controller_sigkilled_mid_hand_restarts_and_loses_nothing(tmp_path):
    broker = Broker(tmp_path / "broker").start()
    sub = Subscriber(broker.port, ["pokerhall/#"])
    config = write_config(tmp_path / "c", broker.port)
    cmd = [str(TABLECTL), "run", "--config", str(config), "--source", "demo", "--speed", "25", "--exit-at-end",
           "--events-out", str(tmp_path / "out.jsonl")]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert sub.wait_for(lambda s: len(s.on(PUB)) >= 12, 30), first.stderr.read1() if first.poll() else ""
        first.send_signal(signal.SIGKILL)
        first.wait(5)
        assert sub.wait_for(lambda s: any(p["status"] == "offline" for p in s.on("/status")), 10)
        # issue 14 item 5: the Last Will outranks the same connection's online (docs/mqtt, "Status order")
        statuses = sub.on("/status")
        assert statuses[-1]["status"] == "offline"
        assert max(statuses, key=lambda p: p["seq"])["status"] == "offline"
        boot1 = sub.on("/status")[-1]["boot"]
        second = subprocess.run(cmd, env=env, capture_output=True, timeout=60, text=True)
        assert second.returncode == 0, second.stderr
        secure, _ = expected_streams()
        assert sub.wait_for(lambda s: len(dedupe(s.on(SEC))) >= len(secure), 20)
        check_complete(sub)
        end_of_hand_1 = next(e["seq"] for e in secure if e["kind"] == "hand-ended")
        assert max(p["event"]["seq"] for p in sub.on(SEC) if p["boot"] == boot1) < end_of_hand_1   # mid-hand
        boots = {p["boot"] for p in sub.on(SEC)}
        assert boot1 in boots and len(boots) == 2
        statuses = [(p["boot"], p["status"]) for p in sub.on("/status")]
        assert (boot1, "offline") in statuses and statuses[-1][1] == "stopped"
        state = sub.on("/state")[-1]["state"]
        assert state["last_seq"] == secure[-1]["seq"] and state["hand"] == 2 and not state["in_hand"]
    finally:
        if first.poll() is None:
            first.kill()
        sub.close()
        broker.stop()


def test_sigterm_counts_the_outbox_after_the_last_acknowledgements(tmp_path):
    """Issue 14 item 7: `run` stopped by SIGTERM while the broker is still acknowledging waits (5 s at
    most) for the acknowledgements before it counts what is left: exit 0 and nothing said when all went."""
    broker = Broker(tmp_path / "broker").start()
    sub = Subscriber(broker.port, ["pokerhall/#"])
    config = write_config(tmp_path / "c", broker.port)
    cmd = [str(TABLECTL), "run", "--config", str(config), "--source", "demo", "--speed", "max"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert sub.wait_for(lambda s: len(s.on(SEC)) >= 5, 30)
        proc.send_signal(signal.SIGTERM)           # events still in flight
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "still in the outbox" not in err
        secure, _ = expected_streams()
        got = [p["event"] for p in dedupe(sub.on(SEC))]     # what the controller made before it stopped,
        assert got == secure[:len(got)] and len(got) >= 5   # all of it, in order (the rest: the next start)
        rows = sqlite3.connect(tmp_path / "c" / "outbox.sqlite").execute("select count(*) from outbox").fetchone()
        assert rows == (0,)
    finally:
        if proc.poll() is None:
            proc.kill()
        sub.close()
        broker.stop()


def test_run_needs_a_source_said_and_a_recording_says_it_is_simulated(tmp_path):
    """Issue 14 item 10: `run --config X` alone once played the demo under the table's real id, silently."""
    config = write_config(tmp_path / "c", 1)
    done = subprocess.run([str(TABLECTL), "run", "--config", str(config)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "one of the arguments --source --devices --recording is required" in done.stderr
    both = subprocess.run([str(TABLECTL), "run", "--config", str(config), "--source", "demo", "--recording", "x"],
                          capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "not allowed with" in both.stderr
    broker = Broker(tmp_path / "broker").start()
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/birth", "pokerhall/v1/table/t1/status"])
    try:
        config = write_config(tmp_path / "r", broker.port)
        recording = Path(__file__).parent / "recordings" / "demo-session"
        done = subprocess.run([str(TABLECTL), "run", "--config", str(config), "--recording", str(recording),
                               "--speed", "max", "--exit-at-end"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert sub.wait_for(lambda s: s.on("/birth") and len(s.on("/status")) >= 2, 10)
        birth = sub.on("/birth")[-1]
        assert (birth["source"], birth["simulated"]) == ("recording", True)
        assert {p["source"] for p in sub.on("/status")} == {"recording"}
    finally:
        sub.close()
        broker.stop()
