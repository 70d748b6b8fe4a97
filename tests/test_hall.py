"""The hall's archive (issue 15): every table's events from a real Mosquitto running the shipped config
into the store, nothing lost or doubled across restarts and kills, gaps raised, the chain checked."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from firmware_host.mqtt import contract as mc
from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from hall.archive import Archive, parse
from hall.chain import first_break
from hall.store import open_store
from hall_helpers import hall_config, secure_payload
from mqtt_helpers import shipped_broker, user, write_config
from test_publish import expected_streams

SEC = mc.Topics("t1").secure_event


def _stored_events(store, table="t1"):
    return [{k: v for k, v in e.items() if k != "session"} for e in store.events(table)]


def _play_demo(tmp_path, port):
    """The demo session at table t1 (its own account) into the broker, every event acknowledged."""
    service = Service(load_config(write_config(tmp_path / "table", port, **user("table-t1")))).start()
    try:
        service.feed_from(demo_source(0))
        service.run(drain_timeout=30)
        assert len(service.outbox) == 0
    finally:
        service.close()


def _wait(predicate, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def test_the_archive_keeps_every_event_of_a_table_once_and_the_chain_holds(tmp_path):
    broker = shipped_broker(tmp_path / "broker").start()
    config = hall_config(tmp_path / "hall", broker.port)
    secure, _ = expected_streams()
    try:
        with open_store(config.archive.store) as store, Archive(config, store) as archive:
            assert archive.connected.wait(10)
            _play_demo(tmp_path, broker.port)
            assert _wait(lambda: len(store.events("t1")) >= len(secure))
            time.sleep(0.5)
            assert _stored_events(store) == secure                      # every event, once, in order
            assert archive.counters["rejected"] == 0 and store.rejected() == []
            assert store.births("t1")[0]["profile"] == "000"
            assert store.latest_status("t1")["status"] == "stopped"      # the table closed
            assert first_break("t1", store.links("t1")) is None
            assert store.gaps() == []
    finally:
        broker.stop()


def _raw_table(port, account="table-t1"):
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=account, protocol=mqtt.MQTTv5)
    client.username_pw_set(**user(account))
    client.connect("127.0.0.1", port, 10)
    client.loop_start()
    return client


def _publish(client, topic, payload):
    info = client.publish(topic, mc.dumps(payload), qos=1)
    info.wait_for_publish(10)


def test_duplicates_are_dropped_by_id_whatever_replayed_says_and_a_gap_is_an_alarm_until_filled(tmp_path):
    """A resend (replayed true or false) is stored once; seq 3-4 missing on t1's secure events is an alarm
    naming the table and the range after the grace, cleared when they arrive."""
    secure, _ = expected_streams()
    broker = shipped_broker(tmp_path / "broker").start()
    config = hall_config(tmp_path / "hall", broker.port, gap_grace=1.0)
    alarms: list[str] = []
    table = _raw_table(broker.port)
    try:
        with open_store(config.archive.store) as store, Archive(config, store, on_alarm=alarms.append) as archive:
            assert archive.connected.wait(10)
            payloads = [secure_payload(e, "t1", "boot-a", k) for k, e in enumerate(secure[:6], 1)]
            for p in payloads[:2] + payloads[4:]:
                _publish(table, SEC, p)
            _publish(table, SEC, {**payloads[0], "replayed": True})         # resent by the table
            _publish(table, SEC, payloads[1])                               # redelivered by the broker
            assert _wait(lambda: bool(alarms), 15)
            assert alarms == ["table t1: secure-event of boot boot-a: seq 3-4 missing"]
            assert [a[2] for a in store.open_alarms()] == alarms
            assert _wait(lambda: archive.counters["duplicates"] == 2, 15), archive.counters  # may land after the alarm
            assert store.count("t1") == 4
            for p in payloads[2:4]:
                _publish(table, SEC, p)
            assert _wait(lambda: not store.open_alarms(), 15)
            assert _stored_events(store) == secure[:6]
            assert first_break("t1", store.links("t1")) is None
    finally:
        table.disconnect()
        table.loop_stop()
        broker.stop()


def test_the_archive_is_connected_once_the_broker_took_its_subscriptions(tmp_path, caplog):
    """``Archive.connected`` is set on the SUBACK, not the CONNACK: a table publishing between the two was
    lost at a first start (the duplicates test above once stored 4 and dropped 1 of its 2 resends: its
    first message never reached the archive, its resend was stored). A refused filter is logged and counted."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.reasoncodes import ReasonCode

    class Client:
        subscribed: list = []

        def subscribe(self, filters):
            self.subscribed = filters

    config = hall_config(tmp_path / "hall", 1)
    with open_store(config.archive.store) as store:
        archive = Archive(config, store)
        client = Client()
        archive._connected(client, None, mqtt.ConnectFlags(False), ReasonCode(PacketTypes.CONNACK, "Success"), None)
        assert client.subscribed and not archive.connected.is_set()
        granted = [ReasonCode(PacketTypes.SUBACK, "Granted QoS 1") for _ in client.subscribed]
        archive._subscribed(client, None, 1, granted, None)
        assert archive.connected.is_set() and archive.counters["refused"] == 0
        refused = [ReasonCode(PacketTypes.SUBACK, "Not authorized")] + granted[1:]
        with caplog.at_level("ERROR", logger="hall.archive"):
            archive._subscribed(client, None, 2, refused, None)
        assert archive.counters["refused"] == 1 and client.subscribed[0][0] in caplog.text


def test_a_payload_that_breaks_the_contract_is_kept_apart_with_why_and_the_rest_goes_on():
    validator = mc.Validator()
    with pytest.raises(mc.ContractError, match="not JSON"):
        parse(SEC, b"{nope", 1.0, validator)
    with pytest.raises(mc.ContractError, match="table 't2' on table t1's topic"):
        parse(SEC, json.dumps(secure_payload(expected_streams()[0][0], "t2", "b", 1)).encode(), 1.0, validator)
    good = parse(SEC, json.dumps(secure_payload(expected_streams()[0][0], "t1", "b", 1)).encode(), 1.0, validator)
    assert (good.table, good.topic, good.seq, good.hand, good.kind) == ("t1", "secure-event", 1, 1, "hand-started")


def _hall_run(config_path, log):
    return subprocess.Popen([sys.executable, "-m", "firmware_host.cli", "hall", "run", "--config", str(config_path)],
                            stdout=log, stderr=subprocess.STDOUT)


def test_nothing_the_broker_acknowledged_is_lost_to_an_archive_killed_or_a_broker_killed(tmp_path):
    """``tablectl hall run`` killed with SIGKILL while the table plays, the broker killed with kill -9 while
    the archive is away: restarted, the archive has every event once."""
    secure, _ = expected_streams()
    broker = shipped_broker(tmp_path / "broker").start()
    config = hall_config(tmp_path / "hall", broker.port)
    path = tmp_path / "hall" / "hall.toml"
    log = open(tmp_path / "hall.log", "wb")
    archive = _hall_run(path, log)
    try:
        with open_store(config.archive.store) as store:
            assert _wait(lambda: "archiving" in (tmp_path / "hall.log").read_text(), 20)
            time.sleep(1.0)
            service = Service(load_config(write_config(tmp_path / "table", broker.port, **user("table-t1")))).start()
            service.feed_from(demo_source(20))                          # about 15 s of play
            playing = threading.Thread(target=service.run, kwargs={"drain_timeout": 60})
            playing.start()
            assert _wait(lambda: len(store.events("t1")) >= 10, 20)
            os.kill(archive.pid, signal.SIGKILL)                          # the archive dies mid-hand
            archive.wait(10)
            assert len(store.events("t1")) < len(secure)
            playing.join()
            assert len(service.outbox) == 0                               # the broker has everything...
            service.close()
            broker.kill()                                                 # ...and dies at once
            broker.start()
            archive = _hall_run(path, log)
            assert _wait(lambda: len(store.events("t1")) >= len(secure), 40)
            time.sleep(1.0)
            assert _stored_events(store) == secure
            assert first_break("t1", store.links("t1")) is None
    finally:
        archive.send_signal(signal.SIGTERM)
        assert archive.wait(20) == 0
        log.close()
        broker.stop()
    assert "stopped: everything received was stored and acknowledged" in (tmp_path / "hall.log").read_text()


def test_hall_verify_names_the_first_broken_link(tmp_path):
    secure, _ = expected_streams()
    url = str(tmp_path / "a.sqlite")
    with open_store(url) as store:
        store.add([parse(SEC, json.dumps(secure_payload(e, "t1", "b", k)).encode(), 1.0)
                   for k, e in enumerate(secure[:20], 1)], 2.0)
    from firmware_host.cli.main import main
    assert main(["hall", "verify", "--store", url]) == 0
    import sqlite3
    with sqlite3.connect(url) as db:                      # someone edits a stored action
        db.execute("UPDATE messages SET payload = replace(payload, '\"total\":300', '\"total\":3000') WHERE link = 12")
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "hall", "verify", "--store", url],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "BROKEN table t1: link 12 (message t1-s1-12) is broken: its content does not match its hash" in done.stdout
    with sqlite3.connect(url) as db:                      # or removes a row
        db.execute("UPDATE messages SET payload = replace(payload, '\"total\":3000', '\"total\":300') WHERE link = 12")
        db.execute("DELETE FROM messages WHERE link = 11")
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "hall", "verify", "--store", url],
                          capture_output=True, text=True)
    assert "link 11 is missing (next stored is 12)" in done.stdout


@pytest.fixture(scope="module")
def postgres():
    """A real PostgreSQL started for these tests (Debian's server, a fresh cluster; reachable by its
    ``postgres`` user when the tests run as root, hence a directory of its own under /tmp)."""
    import shutil
    import tempfile

    from hall.store.local_postgres import LocalPostgres
    directory = tempfile.mkdtemp(prefix="pokerhall-pg-")
    os.chmod(directory, 0o755)
    server = LocalPostgres(directory).start()
    yield server
    server.stop()
    shutil.rmtree(directory, ignore_errors=True)


def test_two_workers_sharing_a_subscription_fill_one_postgresql_once_with_a_chain_per_table(tmp_path, postgres):
    """Two archive workers (their own accounts, one share group) and one PostgreSQL: two tables play at
    once; every event of each is stored once, each table's chain holds, both workers took a share."""
    broker = shipped_broker(tmp_path / "broker").start()
    url = postgres.url("shared")
    configs = [hall_config(tmp_path / name, broker.port, name, store=url, group="archive")
               for name in ("archive-1", "archive-2")]
    secure, _ = expected_streams()
    stores = [open_store(url) for _ in configs]
    workers = [Archive(c, s).start() for c, s in zip(configs, stores)]
    try:
        assert all(w.connected.wait(10) for w in workers)
        time.sleep(0.5)
        tables = []
        for name in ("t1", "t2"):
            cfg = write_config(tmp_path / name, broker.port, table=name, **user(f"table-{name}"))
            service = Service(load_config(cfg)).start()
            service.feed_from(demo_source(0))
            tables.append((service, threading.Thread(target=service.run, kwargs={"drain_timeout": 60})))
        for _, thread in tables:
            thread.start()
        for service, thread in tables:
            thread.join()
            assert len(service.outbox) == 0
            service.close()
        store = stores[0]
        assert _wait(lambda: all(len(store.events(t)) >= len(secure) for t in ("t1", "t2")), 30)
        time.sleep(1.0)
        for table in ("t1", "t2"):
            events = _stored_events(store, table)
            assert [{**e, "table": "t1"} for e in events] == secure
            assert first_break(table, store.links(table)) is None
            ended = store.ended(table)                                      # the dashboard's index reads
            assert [e["hand"] for e in ended] == sorted({e["hand"] for e in events}, reverse=True)
            last = ended[0]
            assert [e["seq"] for e in store.hand_events(table, last["session"], last["hand"])] == [
                e["seq"] for e in events if e["hand"] == last["hand"]]
        assert all(w.counters["stored"] > 0 for w in workers)               # the load was shared
        assert store.gaps() == []
    finally:
        for w in workers:
            w.close()
        for s in stores:
            s.close()
        broker.stop()


def test_a_store_that_cannot_be_reached_is_one_line_naming_it(tmp_path, capsys):
    from firmware_host.cli.main import main
    assert main(["hall", "verify", "--store", "postgresql://nobody:secret@127.0.0.1:1/none"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: postgresql://nobody@127.0.0.1:1/none: cannot connect") and "secret" not in err
    assert main(["hall", "verify", "--store", str(tmp_path / "missing" / "a.sqlite")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_hall_hands_recalls_the_last_hands_and_export_keeps_to_its_time_window(tmp_path, capsys):
    """Last-game recall: every event of the last hand, hole cards included (the hall's own record); the PHH
    export of a time window holds only the hands published in it."""
    from firmware_host.cli.main import main
    secure, _ = expected_streams()
    url = str(tmp_path / "a.sqlite")
    birth = mc.envelope("birth", "t1", "b", 1, "b-birth-1", 0.5, software="x", contract_version=1,
                        event_schema="pokertable.event", event_schema_version=1, profile="000", session="s1",
                        started=0.0, hardware={}, source="demo", simulated=True, chip_unit=25)
    with open_store(url) as store:
        store.add([parse(mc.Topics("t1").birth, json.dumps(birth).encode(), 1.0, mc.Validator())]
                  + [parse(SEC, json.dumps(secure_payload(e, "t1", "b", k, now=1000.0 + e["hand"])).encode(), 1.0)
                     for k, e in enumerate(secure, 1)], 2.0)
    capsys.readouterr()
    assert main(["hall", "hands", "--store", url, "--table", "t1", "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== table t1, hand 2 (session s1, house 000)")     # the third is not over
    assert "NEW HAND" in out and "seat 2 dealt Tc" in out and "END" in out and " hand 1 " not in out
    assert main(["hall", "export", "--store", url, "--table", "t1", "--from", "1001.5", "--to", "1002.5",
                 "--out", str(tmp_path / "h.phhs")]) == 0
    text = (tmp_path / "h.phhs").read_text()
    assert text.count("variant = 'NT'") == 1 and "hand = 2" in text and "_house = '000'" in text
    assert "_chip_unit = 25" in text and "premature-card" in text
    assert main(["hall", "hands", "--store", url, "--table", "t9"]) == 1


def test_a_database_that_goes_down_loses_nothing_the_archive_stores_it_when_it_is_back(tmp_path, postgres):
    """PostgreSQL stopped while a table plays: nothing is acknowledged to the broker meanwhile (store errors
    counted, retried); started again, every event is stored once and the chain holds."""
    secure, _ = expected_streams()
    broker = shipped_broker(tmp_path / "broker").start()
    url = postgres.url("outage")
    config = hall_config(tmp_path / "hall", broker.port, store=url)
    try:
        with open_store(url) as store, Archive(config, store) as archive:
            assert archive.connected.wait(10)
            postgres.stop()                                              # the database goes down
            _play_demo(tmp_path, broker.port)
            assert _wait(lambda: archive.counters["store_errors"] > 0, 20)
            postgres.start()
            assert _wait(lambda: len(store.events("t1")) >= len(secure), 60)
            time.sleep(0.5)
            assert _stored_events(store) == secure
            assert first_break("t1", store.links("t1")) is None
    finally:
        if not postgres.proc or postgres.proc.poll() is not None:
            postgres.start()
        broker.stop()
