"""The shipped broker config (hardware/mosquitto/mosquitto.conf.example, run as it ships): what the broker
acknowledged survives a kill -9, and no account can take another's session by its client id."""
from __future__ import annotations

import json
import signal
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from firmware_host.sim.broker import site_settings
from mqtt_helpers import MOSQUITTO_DIR, Broker, Subscriber, dedupe, shipped_broker, user, write_config
from test_publish import SEC, expected_streams

SHIPPED = MOSQUITTO_DIR / "mosquitto.conf.example"


def test_the_tests_run_the_shipped_settings_verbatim(tmp_path):
    broker = shipped_broker(tmp_path / "b")
    conf = broker.conf.read_text().splitlines()
    for line in site_settings(SHIPPED):       # every setting of the shipped file, ports and paths aside
        assert line in conf
    assert "autosave_on_changes true" in conf and "use_username_as_clientid true" in conf


def test_events_the_broker_acknowledged_survive_a_kill_9(tmp_path):
    """Issue 14 item 2: the controller's backlog acknowledged, the broker killed at once, restarted: the
    durable surveillance session still gets every secure event (345 were lost without autosave)."""
    broker = shipped_broker(tmp_path / "broker").start()
    watcher = Subscriber(broker.port, ["pokerhall/v1/secure/#"], persistent=True, **user("surveillance"))
    watcher.close()                                  # away: the broker queues for it
    service = Service(load_config(write_config(tmp_path / "c", broker.port, **user("table-t1")))).start()
    try:
        service.feed_from(demo_source(0))
        service.run(drain_timeout=30)
        assert len(service.outbox) == 0              # every event acknowledged by the broker...
        broker.kill()                                # ...which dies at once
    finally:
        service.close()
    broker.start()
    secure, _ = expected_streams()
    back = Subscriber(broker.port, ["pokerhall/v1/secure/#"], persistent=True, **user("surveillance"))
    try:
        assert back.wait_for(lambda s: len(dedupe(s.on(SEC))) >= len(secure), 20)
        assert [p["event"] for p in dedupe(back.on(SEC))] == secure
    finally:
        back.close()
        broker.stop()


def _connect_as(port: int, account: str, client_id: str) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    client.username_pw_set(**user(account))
    client.connect("127.0.0.1", port, 10, clean_start=True)
    client.loop_start()
    return client


def test_no_account_can_take_a_table_or_surveillance_session_by_its_client_id(tmp_path):
    """Issue 14 item 3: 10 connections in 10 s with the table's and the surveillance's client ids (clean
    start, as an attacker with the public account would) neither flap the table offline nor wipe the
    surveillance's durable session."""
    broker = shipped_broker(tmp_path / "broker").start()
    status = Subscriber(broker.port, ["pokerhall/v1/table/t1/status"], **user("td"))
    watcher = Subscriber(broker.port, ["pokerhall/v1/secure/#"], persistent=True, **user("surveillance"))
    watcher.close()
    service = Service(load_config(write_config(tmp_path / "c", broker.port, **user("table-t1")))).start()
    try:
        assert service.publisher.connected.wait(5)
        service.feed_from(demo_source(0))
        service.run(drain_timeout=30)
        attackers = []
        for i in range(10):
            client_id = ("table-t1", "surveillance")[i % 2]
            attackers.append(_connect_as(broker.port, "public", client_id))
            time.sleep(1)
        assert service.publisher.stats["disconnects"] == 0
        assert [p["status"] for p in status.on("/status")] == ["online"]
        secure, _ = expected_streams()
        back = Subscriber(broker.port, ["pokerhall/v1/secure/#"], persistent=True, **user("surveillance"))
        assert back.wait_for(lambda s: len(dedupe(s.on(SEC))) >= len(secure), 20)
        back.close()
        for client in attackers:
            client.disconnect()
            client.loop_stop()
    finally:
        service.close()
        status.close()
        broker.stop()


def test_a_refused_publish_is_an_alarm_with_back_off_and_nothing_is_lost(tmp_path):
    """Issue 14 item 4: a broker whose ACL refuses the table's event topic (a misconfigured hall) once
    looped 263 reconnects in 75 s, silently. Now: the alarm on status, health and the irregularity topic,
    a doubling back-off with the refused message retried alone, and once the ACL is mended (SIGHUP) every
    event arrives."""
    acl = tmp_path / "acl"
    shipped = (MOSQUITTO_DIR / "acl.example").read_text()
    acl.write_text(shipped.replace("topic write pokerhall/v1/table/t1/event\n", ""))
    broker = Broker(tmp_path / "broker", config=SHIPPED, acl_file=acl,
                    password_file=MOSQUITTO_DIR / "passwd.example").start()
    td = Subscriber(broker.port, ["pokerhall/v1/table/t1/#"], **user("td"))
    service = Service(load_config(write_config(tmp_path / "c", broker.port, **user("table-t1")))).start()
    try:
        for o in demo_source(0):
            service.handle(o)
        assert td.wait_for(lambda s: any(p["alarm"]["irregularity"] == "publish-refused"
                                         for p in s.on("/irregularity") if "alarm" in p), 15)
        alarm = next(p["alarm"] for p in td.on("/irregularity") if "alarm" in p)
        assert "pokerhall/v1/table/t1/event" in alarm["detail"] and "Not authorized" in alarm["detail"]
        assert td.wait_for(lambda s: any("publish-refused" in p["alarms"] for p in s.on("/status")), 5)
        assert td.wait_for(lambda s: any("publish-refused" in p["health"]["alarms"] for p in s.on("/health")), 5)
        time.sleep(8)
        stats = service.publisher.stats
        assert 2 <= stats["refusals"] <= 5 and stats["connects"] == 1, stats   # backed off: 1, 2, 4, 8 s...
        assert stats["published"] < 1000, stats                      # not a flood of resends
        assert len(service.outbox) > 0                               # nothing dropped
        assert not td.on("/event")
        acl.write_text(shipped)                                      # the hall mends its ACL
        broker.proc.send_signal(signal.SIGHUP)
        _, public = expected_streams()
        assert td.wait_for(lambda s: len(dedupe(s.on("/event"))) >= len(public), 60)
        assert [p["event"] for p in dedupe(td.on("/event"))] == public
        assert td.wait_for(lambda s: s.on("/status")[-1]["alarms"] == [], 10)
    finally:
        service.close()
        td.close()
        broker.stop()


def test_a_table_account_reaches_only_its_own_topics(tmp_path):
    """Threat model: table-t1 cannot read table t2's topics or secure tree, nor publish as t2."""
    broker = shipped_broker(tmp_path / "broker").start()
    spy = Subscriber(broker.port, ["pokerhall/v1/table/t2/#", "pokerhall/v1/secure/#"], **user("table-t1"))
    t2 = Service(load_config(write_config(tmp_path / "c", broker.port, table="t2", **user("table-t2")))).start()
    watcher = Subscriber(broker.port, ["pokerhall/v1/table/t2/event"], **user("surveillance"))
    try:
        t2.feed_from(demo_source(0))
        t2.run(drain_timeout=30)
        refused = []
        spy.client.on_publish = lambda client, userdata, mid, rc, props: refused.append(rc.is_failure)
        spy.client.publish("pokerhall/v1/table/t2/event", b'{"forged": true}', qos=1).wait_for_publish(5)
        assert watcher.wait_for(lambda s: len(s.on("/event")) > 10, 10)
        time.sleep(0.5)
        assert refused == [True]
        assert spy.messages == []
        assert all("forged" not in p for p in watcher.on("/event"))
    finally:
        t2.close()
        spy.close()
        watcher.close()
        broker.stop()


def test_one_packet_over_the_brokers_limit_is_refused_whole_and_the_others_go_on(tmp_path):
    """Threat model: an account (a stolen table's) sending one packet of 2 MB, far over anything the
    hall carries (an event is under 1 KB, a command at most 64 KB): the shipped broker refuses it by its
    header (``max_packet_size``, without buffering it) and drops that connection; nothing of it reaches
    a subscriber; a packet of 200 KB still passes, and another table's events still flow."""
    broker = shipped_broker(tmp_path / "broker").start()
    watcher = Subscriber(broker.port, ["pokerhall/v1/table/+/event"], **user("surveillance"))
    dropped = threading.Event()
    thief = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)  # (told no limit by CONNACK)
    thief.username_pw_set(**user("table-t1"))
    thief.on_disconnect = lambda *args: dropped.set()
    thief.connect("127.0.0.1", broker.port, 10)
    thief.loop_start()
    t2 = _connect_as(broker.port, "table-t2", "t2")
    try:
        thief.publish("pokerhall/v1/table/t1/event", json.dumps({"pad": "x" * 2_000_000}), qos=1)
        assert dropped.wait(10)
        t2.publish("pokerhall/v1/table/t2/event", json.dumps({"pad": "y" * 200_000}), qos=1).wait_for_publish(5)
        t2.publish("pokerhall/v1/table/t2/event", b'{"seq": 1}', qos=1).wait_for_publish(5)
        assert watcher.wait_for(lambda s: len(s.on("/event")) >= 2, 10)
        time.sleep(0.5)
        assert [len(p.get("pad", "")) for p in watcher.on("/event")] == [200_000, 0]
    finally:
        thief.disconnect()
        thief.loop_stop()
        t2.disconnect()
        t2.loop_stop()
        watcher.close()
        broker.stop()
