"""The shipped ACL and password file (hardware/mosquitto/) keep hole cards from the public credentials."""
from __future__ import annotations

import json
import time

import pytest

from firmware_host.mqtt import contract as mc
from firmware_host.service.config import load_config
from firmware_host.service.service import Service, demo_source
from mqtt_helpers import Broker, Subscriber, make_certificates, shipped_broker, user, write_config
from test_publish import PUB, SEC, assert_no_secret_on_public, expected_streams, signed_cmd


@pytest.fixture
def hall(tmp_path):
    broker = shipped_broker(tmp_path / "broker").start()
    yield broker
    broker.stop()


def test_public_credentials_cannot_read_the_secure_tree(tmp_path, hall):
    public = Subscriber(hall.port, ["pokerhall/#", "pokerhall/v1/secure/#", "pokerhall/v1/secure/table/t1/event"],
                        **user("public"))
    surveillance = Subscriber(hall.port, ["pokerhall/#"], **user("surveillance"))
    service = Service(load_config(write_config(tmp_path / "c", hall.port, **user("table-t1")))).start()
    service.feed_from(demo_source(0))
    service.run(drain_timeout=20)
    secure, public_events = expected_streams()
    assert surveillance.wait_for(lambda s: len(s.on(SEC)) >= len(secure), 10)
    assert public.wait_for(lambda s: len(s.on(PUB)) >= len(public_events), 10)
    time.sleep(0.5)
    service.close()
    # surveillance sees the hole cards; the public credentials see none of the secure tree
    assert [p["event"] for p in surveillance.on(SEC)] == secure
    assert any(p["event"]["kind"] == "hole-card-dealt" for p in surveillance.on(SEC))
    assert not [t for t, _, _ in public.messages if t.startswith(mc.SECURE_ROOT)]
    assert [p["event"] for p in public.on(PUB)] == public_events
    assert_no_secret_on_public(public.messages, secure)
    assert not any("hole-card-dealt" in json.dumps(p) or "card-burned" in json.dumps(p) for _, p, _ in public.messages)
    public.close()
    surveillance.close()


def test_only_the_td_can_command_a_table(tmp_path, hall):
    td = Subscriber(hall.port, ["pokerhall/v1/table/t1/reply/#"], **user("td"))
    service = Service(load_config(write_config(tmp_path / "c", hall.port, **user("table-t1")))).start()
    assert service.publisher.connected.wait(5)
    import threading
    stop = threading.Event()
    loop = threading.Thread(target=service.run, kwargs={"until_source_ends": False, "stop": stop, "drain_timeout": 1})
    loop.start()
    try:
        topic = mc.Topics("t1").cmd("pause")
        public = Subscriber(hall.port, ["pokerhall/v1/table/t1/status"], **user("public"))
        public.client.publish(topic, signed_cmd({"paused": True}, "p-1"), qos=1).wait_for_publish(5)
        public.close()
        # one connection per account (the shipped config binds the client id to it): the TD's own
        td.client.publish(topic, signed_cmd({"paused": True}, "td-1"), qos=1).wait_for_publish(5)
        assert td.wait_for(lambda s: s.messages, 10)
        time.sleep(1)
        replies = [p["reply"] for p in td.on("/reply/pause")]
        assert [(r["txn"], r["status"]) for r in replies] == [("td-1", "ok")]
        assert service.counters["commands"] == 1 and service.counters["bad_commands"] == 0
    finally:
        stop.set()
        loop.join(10)
        service.close()
        td.close()


def test_wrong_password_is_logged_and_the_controller_keeps_queueing(tmp_path, hall):
    config = load_config(write_config(tmp_path / "c", hall.port, username="table-t1", password="wrong"))
    service = Service(config).start()
    try:
        for o in demo_source(0):
            service.handle(o)
        time.sleep(1)
        assert not service.publisher.connected.is_set()
        assert "refused" in service.publisher.last_error or "Not authorized" in service.publisher.last_error
        assert len(service.outbox) > 100 and service.counters["observations"] > 100
    finally:
        service.close()


def test_tls_is_configuration_only(tmp_path):
    ca, cert, key = make_certificates(tmp_path / "certs")
    broker = Broker(tmp_path / "broker", tls=(ca, cert, key)).start()
    try:
        sub = Subscriber(broker.port, [PUB], ca_file=ca)
        config = write_config(tmp_path / "c", broker.port, broker_extra=f'tls = true\nca_file = "{ca}"\n')
        service = Service(load_config(config)).start()
        service.feed_from(demo_source(0))
        service.run(drain_timeout=20)
        assert len(service.outbox) == 0 and service.publisher.stats["connects"] == 1
        _, public = expected_streams()
        assert sub.wait_for(lambda s: len(s.on(PUB)) >= len(public), 10)
        service.close()
        sub.close()
        # the same controller without TLS cannot talk to a TLS-only broker: it queues, nothing is lost
        plain = Service(load_config(write_config(tmp_path / "p", broker.port))).start()
        plain.handle(next(iter(demo_source(0))))
        plain.handle(next(o for o in demo_source(0) if type(o).__name__ == "ConsolePress"))
        time.sleep(1)
        assert not plain.publisher.connected.is_set() and len(plain.outbox) > 0
        plain.close()
    finally:
        broker.stop()
