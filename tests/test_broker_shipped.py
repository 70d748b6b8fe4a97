"""The shipped broker config (hardware/mosquitto/mosquitto.conf.example, run as it ships): what the broker
acknowledged survives a kill -9, and no account can take another's session by its client id."""
from __future__ import annotations

import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from firmware_host.sim.broker import site_settings
from mqtt_helpers import MOSQUITTO_DIR, Subscriber, dedupe, shipped_broker, user, write_config
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
