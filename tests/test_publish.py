"""Publishing over MQTT against a real Mosquitto on loopback: contract, validation, no card leaked,
journal replay, outbox while the broker is down, commands."""
from __future__ import annotations

import json
import re
import threading
import time

import pytest

from firmware_host.configfile import ConfigError
from firmware_host.mqtt import contract as mc
from firmware_host.mqtt.public_view import PublicView
from firmware_host.observations import OBSERVATION_TYPES, CardEntered
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import builtin_profile
from firmware_host.service.config import load_config, parse_config
from firmware_host.service.service import Service, demo_source
from firmware_host.sim.demo import script
from mqtt_helpers import KEY, Broker, Subscriber, dedupe, free_port, shipped_broker, user, write_config

PUB, SEC = mc.Topics("t1").event, mc.Topics("t1").secure_event
RUN = re.compile(r"\(((?:[2-9TJQKA][cdhs])+)\)")


def expected_streams(observations=None):
    """The secure (every event) and public bodies a fresh engine gives for the demo, as JSON."""
    engine, view = HandEngine(builtin_profile("000"), "t1"), PublicView()
    secure, public = [], []
    for o in observations or script():
        for e in engine.feed(o):
            secure.append(json.loads(e.to_json()))
            body = view.apply(e)
            if body is not None:
                public.append(json.loads(json.dumps(body)))
    return secure, public


def cards_in(text: str) -> set[str]:
    found = set(mc.CARD_RE.findall(text))
    for run in RUN.findall(text):
        found |= {run[i:i + 2] for i in range(0, len(run), 2)}
    return found


def assert_no_secret_on_public(messages, secure_events) -> None:
    """No public message names a hole card of its hand before that card's hand-shown event, nor a burn card.

    A payload is "as of" an engine seq: its event's, or the state's ``last_seq``.
    """
    secret: dict[int, set[str]] = {}
    shown_at: dict[tuple[int, str], int] = {}
    for e in secure_events:
        if e["kind"] in ("hole-card-dealt", "card-burned"):
            secret.setdefault(e["hand"], set()).add(e["card"])
        if e["kind"] == "hand-shown":
            shown_at.update({(e["hand"], c): e["seq"] for c in e["cards"]})
    checked = 0
    for topic, payload, _ in messages:
        assert not topic.startswith(mc.SECURE_ROOT)
        found = cards_in(json.dumps(payload))
        if "event" in payload:
            hand, as_of = payload["event"]["hand"], payload["event"]["seq"]
        elif "state" in payload:
            hand, as_of = payload["state"]["hand"], payload["state"]["last_seq"]
        else:
            assert not found, f"{topic}: cards in {payload}"
            continue
        hidden = {c for c in secret.get(hand, ()) if shown_at.get((hand, c), as_of + 1) > as_of}
        assert not found & hidden, f"{topic} (hand {hand}, seq {as_of}) leaks {found & hidden}: {payload}"
        checked += 1
    assert checked > 0


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "broker").start()
    yield b
    b.stop()


def run_demo(config_path, **kw):
    service = Service(load_config(config_path), **kw).start()
    service.feed_from(demo_source(0))
    service.run(drain_timeout=20)
    return service


def test_topics_ids_and_envelope():
    t = mc.Topics("t1")
    assert t.event == "pokerhall/v1/table/t1/event"
    assert t.secure_event == "pokerhall/v1/secure/table/t1/event"
    assert t.cmd("set-level") == "pokerhall/v1/table/t1/cmd/set-level"
    assert t.kind_of(t.reply("pause")) == "reply" and not t.is_public(t.secure_event)
    for bad in ("T1", "t_1", "-t1", "", "a" * 65, "t1/x", "t1+"):
        with pytest.raises(mc.ContractError):
            mc.Topics(bad)


def test_generated_event_schema_is_committed():
    committed = json.loads((mc.SCHEMA_DIR / "event-bodies.schema.json").read_text())
    assert committed == json.loads(json.dumps(mc.event_schemas())), \
        "events.py changed: run python -m firmware_host.mqtt.contract"


def test_asyncapi_names_every_topic_and_schema():
    doc = json.loads((mc.SCHEMA_DIR.parent / "asyncapi.json").read_text())
    assert doc["asyncapi"].startswith("3.")
    addresses = {c["address"] for c in doc["channels"].values()}
    for suffix in ("status", "birth", "state", "event", "irregularity", "health", "cmd/{command}", "reply/{command}"):
        assert f"pokerhall/v1/table/{{table}}/{suffix}" in addresses
    assert "pokerhall/v1/secure/table/{table}/event" in addresses
    refs = set(re.findall(r'schemas/([a-z-]+)\.schema\.json', json.dumps(doc)))
    assert refs == {p.name.removesuffix(".schema.json") for p in mc.SCHEMA_DIR.glob("*.schema.json")} - {
        "envelope", "event-bodies"}


def test_config_errors_name_the_key(tmp_path):
    good = load_config(write_config(tmp_path, 1883))
    assert good.table == "t1" and good.broker.port == 1883 and good.command_key == KEY.encode()
    base = json.loads(json.dumps({"table": {"id": "t1", "profile": "000"},
                                  "broker": {"host": "h", "port": 1883},
                                  "outbox": {"path": "o", "max_bytes": 100000}, "journal": {"path": "j"},
                                  "commands": {"key": KEY}}))
    parse_config(base)
    for section, key, value, message in [
        ("broker", "port", "1883", "broker.port"), ("broker", "prot", 1, "broker.prot"),
        ("table", "id", "Table 1", "table.id"), ("outbox", "max_bytes", 10, "outbox.max_bytes"),
        ("commands", "key", "short", "commands.key"), ("publish", "broadcast_delay", -1, "publish.broadcast_delay"),
        ("broker", "tls", "yes", "broker.tls"), ("broker", "ca_file", "/nonexistent.pem", "broker.ca_file"),
    ]:
        data = json.loads(json.dumps(base))
        data.setdefault(section, {})[key] = value
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_config(data)
    del base["journal"]
    with pytest.raises(ConfigError, match="journal.path"):
        parse_config(base)


def test_demo_session_arrives_in_order_validates_and_leaks_nothing(tmp_path, broker):
    sub = Subscriber(broker.port, ["pokerhall/#"])
    service = run_demo(write_config(tmp_path / "c", broker.port))
    assert sub.wait_for(lambda s: any(h["health"]["outbox"]["rows"] == 0 for h in s.on("/health")), 5)
    service.close()
    assert sub.wait_for(lambda s: any(p["status"] == "stopped" for p in s.on("/status")), 5)
    sub.close()
    secure, public = expected_streams()
    validator = mc.Validator()
    for topic, payload, _ in sub.messages:
        assert validator.errors(payload) == [], topic
        assert payload["table"] == "t1" and payload["boot"] == service.boot
    got_public = [p["event"] for p in dedupe(sub.on(PUB))]
    assert got_public == public
    assert [p["event"] for p in dedupe(sub.on(SEC))] == secure
    assert len(secure) > len(public) > 30
    for suffix in (PUB, SEC, "/state"):   # (status: each connection prepares a Last Will, which takes a seq)
        seqs = [p["seq"] for p in sub.on(suffix)]
        assert seqs == list(range(1, len(seqs) + 1)), suffix      # per boot and topic: no gap
    irregularities = sub.on("/irregularity")
    assert [p["event"]["irregularity"] for p in irregularities] == [
        e["irregularity"] for e in public if e["kind"] == "irregularity"]
    state = sub.on("/state")[-1]["state"]
    assert state["hand"] == 2 and not state["in_hand"] and state["last_seq"] == secure[-1]["seq"]
    birth = sub.on("/birth")[-1]
    assert birth["software"] and birth["hardware"] == {"shoe": "replay", "readers": 0}
    assert birth["source"] == "demo" and birth["simulated"]          # issue 14 item 10: a demo says so
    assert {p["source"] for p in sub.on("/status")} == {"demo"}
    assert_no_secret_on_public([m for m in sub.messages if not m[0].startswith(mc.SECURE_ROOT)], secure)


def test_hole_card_in_an_irregularity_is_masked_on_public_topics():
    view = PublicView()
    engine = HandEngine(builtin_profile("000"), "t1")
    obs = script()
    first_card = obs.index(next(o for o in obs if isinstance(o, CardEntered)))
    events = [e for o in obs[:first_card + 4] for e in engine.feed(o)]
    for e in events:
        view.apply(e)
    hole = next(e for e in events if e.KIND == "hole-card-dealt")
    from firmware_host.events import Irregularity
    leak = Irregularity(table="t1", hand=1, seq=99, t=1.0, irregularity="x", rule="", seats=(hole.seat,),
                        procedure=f"{hole.card} seen face up at seat {hole.seat}", cards=(hole.card,))
    body = view.apply(leak)
    assert hole.card not in json.dumps(body) and body["cards"] == ["XX"]
    assert mc.Validator().errors(mc.envelope("event", "t1", "b1", 1, "t1-x-99", 0.0, event=body)) == []


def test_restart_replays_the_journal_without_publishing_twice(tmp_path, broker):
    sub = Subscriber(broker.port, [PUB, "pokerhall/v1/secure/#"])
    config = load_config(write_config(tmp_path / "c", broker.port))
    obs = script()
    engine = HandEngine(builtin_profile("000"), "t1")
    caused = [len(engine.feed(o)) for o in obs]
    k = next(i for i in range(60, len(obs)) if caused[i])     # an observation that causes events
    first = Service(config).start()
    for o in obs[:k]:
        first.handle(o)
    assert first.drain(10)
    first.journal.append(obs[k])       # the power fails after journaling it, before the engine ran
    first.close()
    second = Service(config).start()   # replays the journal; enqueues only obs[k]'s events
    assert second.engine.seq == sum(caused[:k + 1]) and second.source_done == k + 1
    assert second.drain(10) and second.boot != first.boot
    for o in obs[k + 1:]:
        second.handle(o)
    assert second.drain(10)
    second.close()
    secure, public = expected_streams()
    assert sub.wait_for(lambda s: len(s.on(SEC)) >= len(secure), 10)
    time.sleep(0.3)
    got = sub.on(SEC)
    assert [p["event"] for p in got] == secure                      # once each: nothing re-published
    assert [p["event"] for p in sub.on(PUB)] == public
    assert not any(p["replayed"] for p in got)
    sub.close()


def test_a_new_journal_with_an_old_outbox_loses_nothing_after_a_crash(tmp_path):
    config = load_config(write_config(tmp_path / "c", free_port()))     # no broker: rows stay
    obs = script()
    engine = HandEngine(builtin_profile("000"), "t1")
    caused = [bool(engine.feed(o)) for o in obs]
    k = next(i for i in range(11, len(obs)) if caused[i])      # mid-hand 1, an observation with events
    with Service(config).start() as first:
        for o in obs[:60]:
            first.handle(o)
    config.journal_path.unlink()                # a new journal: event seq starts again at 1
    with Service(config).start() as second:
        for o in obs[:k]:
            second.handle(o)
        second.journal.append(obs[k])           # crash after journaling, before the engine ran
        rows = len(second.outbox)
    with Service(config).start() as third:      # obs[k]'s events are enqueued despite the old high-water mark
        assert len(third.outbox) > rows


def test_broker_down_queues_then_drains_in_order_with_alarm(tmp_path):
    port = free_port()
    config = load_config(write_config(tmp_path / "c", port, max_bytes=40_000))
    service = Service(config).start()
    for o in script():
        service.handle(o)           # the broker is not there: the controller keeps running
    assert service.outbox.level() >= config.outbox_alarm and service.counters["outbox_alarms"] == 1
    assert len(service.outbox) > 100 and not service.publisher.connected.is_set()
    rows = len(service.outbox)
    broker = Broker(tmp_path / "b", port=port)
    sub_after = None
    try:
        broker.start()
        sub_after = Subscriber(port, ["pokerhall/#"])
        assert service.drain(20), f"{len(service.outbox)} of {rows} rows left"
        service._health()
        assert sub_after.wait_for(lambda s: s.on("/health"), 5)
        health = sub_after.on("/health")[-1]["health"]
        assert health["outbox"]["rows"] == 0 and health["counters"]["outbox_alarms"] == 1
    finally:
        service.close()
        if sub_after:
            sub_after.close()
        broker.stop()


def signed_cmd(name_args: dict, txn: str, ts: int | None = None, table: str = "t1", key: str = KEY) -> bytes:
    body = {"schema": "pokerhall.cmd", "version": 1, "table": table, "txn": txn,
            "ts": int(time.time()) if ts is None else ts, "args": name_args}
    return json.dumps(mc.signed(body, key.encode())).encode()


def test_commands_are_authenticated_validated_and_answered(tmp_path, broker):
    config = load_config(write_config(tmp_path / "c", broker.port))
    service = Service(config).start()
    obs = script()
    for o in obs[:7]:       # players seated, the level set, the button placed; no hand yet
        service.handle(o)
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/reply/#"])
    assert service.publisher.connected.wait(5)
    validator = mc.Validator()
    t = mc.Topics("t1")
    cases = [
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 200}, "a-1"), "ok", None),
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 200}, "a-1"), "error", "stale-transaction"),
        ("set-level", signed_cmd({"small_blind": 300, "big_blind": 200}, "a-2"), "error", "bad-field"),
        # issue 14 item 8: bounds from the profile (multiples of the smallest chip, up to the structure's
        # largest big blind); a command refused for its content uses up no txn: corrected, it is accepted
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 10**30}, "b-1"), "error", "bad-field"),
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 210}, "b-1"), "error", "bad-field"),
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 200, "number": -1}, "b-1"), "error", "bad-field"),
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 200}, "b-1"), "ok", None),
        ("set-level", signed_cmd({"small_blind": 100, "big_blind": 200, "colour": 1}, "a-3"), "error", "bad-field"),
        ("set-level", signed_cmd({"small_blind": True, "big_blind": 200}, "a-4"), "error", "bad-field"),
        ("set-level", signed_cmd({"small_blind": 1, "big_blind": 2}, "a-5", ts=int(time.time()) - 120), "error",
         "stale-transaction"),
        ("set-level", signed_cmd({"small_blind": 1, "big_blind": 2}, "a-6", key="wrong-key-0123456789"), "error",
         "bad-signature"),
        ("set-level", signed_cmd({"small_blind": 1, "big_blind": 2}, "a-7", table="t2"), "error", "bad-field"),
        ("set-level", b"{not json", "error", "bad-json"),
        ("self-destruct", signed_cmd({}, "a-8"), "error", "unknown-command"),
        ("move-button", signed_cmd({"seat": 11}, "a-9"), "error", "bad-field"),
        ("move-button", signed_cmd({"seat": 3}, "a-10"), "ok", None),
        ("pause", signed_cmd({"paused": True, "reason": "break"}, "a-11"), "ok", None),
        ("pause", signed_cmd({"paused": False}, "a-16"), "ok", None),
        ("void-hand", signed_cmd({"hand": 1, "reason": "td"}, "a-12"), "ok", None),
        ("resolve", signed_cmd({"decision": "Continue!"}, "a-14"),
         "error" if "Resolution" in OBSERVATION_TYPES else "accepted-not-applied", None),
        ("resolve", signed_cmd({"decision": "continue"}, "a-15"),
         "ok" if "Resolution" in OBSERVATION_TYPES else "accepted-not-applied", None),
    ]
    for name, raw, status, code in cases:
        before = (len(service.journal), service.engine.seq)
        sub.messages.clear()
        service._on_message(t.cmd(name), raw)
        kind, item = service._queue.get(timeout=1)
        assert kind == "cmd"
        reply = service.command(*item)
        assert reply["status"] == status, (name, reply)
        if code:
            assert reply["error"]["code"] == code, reply
            assert (len(service.journal), service.engine.seq) == before       # changed nothing
        assert sub.wait_for(lambda s: s.messages, 5), name
        payload = sub.messages[-1][1]
        assert validator.errors(payload) == []
        assert mc.verify({"reply": payload["reply"], "hmac": payload["hmac"]}, KEY.encode())
        assert payload["reply"]["txn"] == (None if raw.startswith(b"{not") else json.loads(raw)["txn"])
    # set-level and move-button reached the engine: the next hand uses them
    events = []
    for o in obs[7:]:
        events += service.handle(o)
    started = next(e for e in events if e.KIND == "hand-started")
    assert (started.small_blind, started.big_blind) == (100, 200)
    # the demo's own MoveButton(6) came before ours: seat 3 has the button
    assert started.button == 3
    # a move-button during a hand: accepted, the engine refuses it with an irregularity in the reply
    service.handle(CardEntered(obs[-1].t, "shoe", "2s"))
    service._on_message(t.cmd("move-button"), signed_cmd({"seat": 4}, "a-13"))
    reply = service.command(*service._queue.get(timeout=1)[1])
    assert reply["status"] == "ok"
    sub.close()
    service.close()


def test_bad_observation_is_counted_published_and_the_controller_keeps_running(tmp_path, broker):
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/irregularity"])
    service = Service(load_config(write_config(tmp_path / "c", broker.port))).start()
    assert service.handle({"type": "CardEntered", "zone": "seat:1"}) == []
    assert service.handle(script()[0]) == []
    assert service.counters["bad_observations"] == 1 and service.counters["observations"] == 1
    assert len(service.journal) == 1
    assert sub.wait_for(lambda s: s.messages, 5)
    alarm = sub.messages[0][1]
    assert alarm["source"] == "controller" and alarm["alarm"]["irregularity"] == "bad-observation"
    assert mc.Validator().errors(alarm) == []
    sub.close()
    service.close()


def test_broadcast_delay_holds_the_secure_tree_only(tmp_path, broker):
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/event", "pokerhall/v1/secure/#"])
    service = Service(load_config(write_config(tmp_path / "c", broker.port, delay=1.5))).start()
    assert service.publisher.connected.wait(5)
    t0 = time.monotonic()
    for o in script()[:12]:
        service.handle(o)
    assert sub.wait_for(lambda s: len(s.on("/secure/table/t1/event")) >= 3, 10)
    with sub.lock:
        public = [at for topic, _, at in sub.messages if "/secure/" not in topic]
        secure = [at for topic, _, at in sub.messages if "/secure/" in topic]
    assert public and min(public) - t0 < 1.0
    assert min(secure) - t0 >= 1.4
    sub.close()
    service.close()


def test_a_hostile_command_gets_a_bounded_error_and_the_table_runs_on(tmp_path, broker, caplog):
    """1,000 nested '[' on cmd/pause and a 1 MB field name: error replies of bounded size; the service thread
    keeps running and then applies a valid command (it used to die of RecursionError)."""
    config = load_config(write_config(tmp_path / "c", broker.port))
    service = Service(config).start()
    stop = threading.Event()
    runner = threading.Thread(target=service.run, kwargs={"until_source_ends": False, "stop": stop}, daemon=True)
    runner.start()
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/reply/#", "pokerhall/v1/table/t1/status"])
    try:
        assert service.publisher.connected.wait(5)
        body = json.loads(signed_cmd({"paused": True}, "h-1"))
        body["k" * 1_000_000] = 1
        t = mc.Topics("t1")
        for raw in (b"[" * 1000, json.dumps(body).encode(), b'{"a":' * 5000):
            sub.client.publish(t.cmd("pause"), raw, qos=1).wait_for_publish(5)
        assert sub.wait_for(lambda s: len(s.payloads(t.reply("pause"))) >= 3, 10)
        for reply in sub.payloads(t.reply("pause")):
            assert reply["reply"]["status"] == "error" and reply["reply"]["error"]["code"] == "bad-json"
            assert len(json.dumps(reply)) < 2000
        sub.client.publish(t.cmd("pause"), signed_cmd({"paused": True}, "h-2"), qos=1).wait_for_publish(5)
        assert sub.wait_for(lambda s: len(s.payloads(t.reply("pause"))) >= 4, 10)
        assert sub.payloads(t.reply("pause"))[-1]["reply"]["status"] == "ok"
        assert runner.is_alive() and service.engine.paused
        assert all(len(r.getMessage()) < 2000 for r in caplog.records)
    finally:
        stop.set()
        runner.join(10)
        service.close()
        sub.close()


def test_what_a_ruling_makes_public_is_shown():
    """Issue 14 item 16: after a four-card flop the floor's ruling puts the fourth card on the board: the
    public resolution names it (no XX), the state's board is the corrected flop, the demo prints it."""
    from pathlib import Path

    from firmware_host.cli.display import describe
    from firmware_host.events import IrregularityResolved
    from firmware_host.hil.recording import load
    from firmware_host.hil.replay import Replay

    with Replay(load(Path(__file__).parent / "recordings" / "four-card-flop")) as replay:
        events = replay.run()
    view = PublicView()
    for event in events:
        body = view.apply(event)
        if isinstance(event, IrregularityResolved) and event.irregularity == "four-card-flop":
            assert len(event.board) == 3 and set(event.board) < set(event.cards)
            assert "XX" not in body["effect"] and body["board"] == list(event.board)
            assert view.state["board"] == list(event.board)
            assert describe(event).endswith("BOARD NOW " + " ".join(event.board))
            break
    else:
        raise AssertionError("no four-card-flop ruling in the recording")


def test_connected_means_commands_arrive(tmp_path):
    """The service says it is connected (and READY) only once the broker has acknowledged its command
    subscription: a command sent at that moment is answered, every time (it used to be lost at random).
    The shipped broker config, ACL and accounts: the table's and the TD's."""
    broker = shipped_broker(tmp_path / "broker").start()
    config = load_config(write_config(tmp_path / "c", broker.port, **user("table-t1")))
    sub = Subscriber(broker.port, ["pokerhall/v1/table/t1/reply/#"], **user("td"))
    t = mc.Topics("t1")
    try:
        for attempt in range(5):
            service = Service(config).start()
            stop = threading.Event()
            runner = threading.Thread(target=service.run, kwargs={"until_source_ends": False, "stop": stop},
                                      daemon=True)
            runner.start()
            try:
                assert service.publisher.connected.wait(5)
                sub.client.publish(t.cmd("pause"), b"[" * 1000, qos=1).wait_for_publish(5)
                assert sub.wait_for(lambda s, n=attempt: len(s.payloads(t.reply("pause"))) > n, 10), attempt
            finally:
                stop.set()
                runner.join(10)
                service.close()
    finally:
        sub.close()
        broker.stop()
