"""The dashboard's pure parts (issue 16): the room from a table's real messages, hand-for-hand, accounts.

The messages are the ones the demo table publishes (the service's own payloads, recorded by a subscriber in
``test_publish.expected_streams``), so the room is tested on what it will receive.
"""
from __future__ import annotations

import json

import pytest

from firmware_host.mqtt import contract as mc
from firmware_host.mqtt.public_view import PublicView
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import builtin_profile
from firmware_host.sim.demo import script
from hall.dashboard.accounts import CAPABILITIES, Accounts, Throttle, User, add_user, load_users
from hall.dashboard.h4h import HandForHand, Order
from hall.dashboard.room import Room
from hall.dashboard.server import mask_holes
from hall_helpers import secure_payload
from test_publish import expected_streams

ROOT = "pokerhall/v1/table/t1"


def _public(event, seq, now=1.0):
    return mc.envelope("event", "t1", "boot-a", seq, mc.event_id("t1", "s1", event["seq"]), now, event=event)


def _status(status, seq, now=1.0, boot="boot-a", **extra):
    return mc.envelope("status", "t1", boot, seq, f"t1-{boot}-status-{seq}", now, status=status, source="demo",
                       **extra)


def _feed_demo(room, now=100.0):
    """The demo as the table publishes it (events, the retained state after each, the secure tree) into
    *room*; the updates."""
    engine, view = HandEngine(builtin_profile("000"), "t1"), PublicView()
    updates = room.feed(f"{ROOT}/status", _status("online", 1), now)
    secure, public = [], []
    for o in script():
        for e in engine.feed(o):
            secure.append(json.loads(e.to_json()))
            updates += room.feed("pokerhall/v1/secure/table/t1/event",
                                 secure_payload(secure[-1], "t1", "boot-a", len(secure)), now)
            body = view.apply(e)
            if body is not None:
                public.append(json.loads(json.dumps(body)))
                updates += room.feed(f"{ROOT}/event", _public(public[-1], len(public)), now)
            state = mc.envelope("state", "t1", "boot-a", len(secure), f"t1-boot-a-state-{len(secure)}", now,
                                state=json.loads(json.dumps(view.state)))
            updates += room.feed(f"{ROOT}/state", state, now)
    return updates, secure, public


def test_an_irregularity_waiting_for_a_decision_is_queued_with_its_rule_and_options_until_resolved():
    room = Room(hole_card_delay=10)
    secure, public = expected_streams()
    room.feed(f"{ROOT}/status", _status("online", 1), 1.0)
    queued = []
    for k, e in enumerate(public, 1):
        for u in room.feed(f"{ROOT}/event", _public(e, k), 1.0):
            if u.event == "queue":
                queued.append([(i["irregularity"], i["rule"], i["options"][0]) for i in u.data])
    # the demo's premature card: queued with its rule, then gone when resolved
    assert queued == [[("premature-card", "000 §39 (TDA RP-5)", "return-card")], []]
    assert room.tile("t1")["open"] == 0


def test_the_same_event_on_two_topics_or_resent_is_one_action():
    room = Room()
    _, public = expected_streams()
    irregular = next(k for k, e in enumerate(public, 1) if e["kind"] == "irregularity")
    payload = _public(public[irregular - 1], irregular)
    assert [u.event for u in room.feed(f"{ROOT}/event", payload, 1.0)][-2:] == ["action", "queue"]
    again = {**payload, "schema": "pokerhall.irregularity", "source": "engine"}
    assert room.feed(f"{ROOT}/irregularity", again, 1.0) == []
    assert room.feed(f"{ROOT}/event", {**payload, "replayed": True}, 1.0) == []
    assert len(room.queue()) == 1


def test_hole_cards_reach_only_the_holes_capability_and_only_after_the_delay():
    room = Room(hole_card_delay=30)
    updates, secure, _ = _feed_demo(room, now=100.0)
    assert not [u for u in updates if u.event == "holes"]
    page = room.page("t1", holes=True)
    assert all(s["holes"] is None for s in page["seats"])
    assert room.tick(129.0) == []
    released = [u for u in room.tick(130.0) if u.event == "holes"]
    assert released and {u.capability for u in released} == {"holes"}
    last_hand = max(e["hand"] for e in secure)
    dealt = {(e["seat"], e["card"]) for e in secure if e["kind"] == "hole-card-dealt" and e["hand"] == last_hand}
    assert {(u.data["seat"], c) for u in released for c in u.data["cards"]} == dealt
    assert all(s["holes"] is None for s in room.page("t1", holes=False)["seats"])
    assert {(s["seat"], c) for s in room.page("t1", holes=True)["seats"] for c in s["holes"] or ()} == dealt
    # nothing else the room sends carries a hole card that was not shown
    shown = {c for e in secure if e["kind"] == "hand-shown" for c in e["cards"]}
    secret = {c for _, c in dealt} - shown
    for u in updates:
        assert not secret & set(str(u.data).replace("'", " ").split()), u


def test_a_table_that_goes_quiet_turns_silent_and_the_last_will_turns_it_offline():
    room = Room(silent_after=5)
    room.feed(f"{ROOT}/status", _status("online", 1_000_001), 10.0)
    assert room.tile("t1")["status"] == "online"
    assert room.tick(14.0) == []
    assert [u.data["status"] for u in room.tick(15.5)] == ["silent"]
    room.feed(f"{ROOT}/status", _status("offline", 1_999_999, reason="connection lost"), 16.0)
    tile = room.tile("t1")
    assert (tile["status"], tile["since"]) == ("offline", 16.0)
    # an older status of the same boot never hides the Will (docs/mqtt "Status order")
    room.feed(f"{ROOT}/status", _status("online", 1_000_002), 17.0)
    assert room.tile("t1")["status"] == "offline"


def test_alarms_of_the_table_and_its_devices_are_on_the_tile():
    room = Room()
    room.feed(f"{ROOT}/status", _status("online", 1, alarms=["outbox-filling"]), 1.0)
    fault = {"schema": "pokertable.event", "version": 1, "kind": "irregularity", "table": "t1", "hand": 0,
             "seq": 1, "t": 1.0, "irregularity": "device-fault:moved", "rule": "000 §1", "seats": [],
             "procedure": "camera: the markers moved 9 px; check the camera's mount", "cards": []}
    room.feed(f"{ROOT}/event", _public(fault, 1), 1.0)
    relit = {**fault, "seq": 2, "irregularity": "device-fault:relit", "procedure": "camera: too warm; check"}
    room.feed(f"{ROOT}/event", _public(relit, 2), 1.0)
    antenna = {**fault, "seq": 3, "irregularity": "device-fault:antenna-open",
               "procedure": "reader:seat:3: antenna open; check the device"}
    room.feed(f"{ROOT}/event", _public(antenna, 3), 1.0)
    assert room.tile("t1")["alarms"] == ["outbox-filling", "camera: moved", "camera: relit",
                                         "reader:seat:3: antenna-open"]
    assert room.queue() == []

    def recovered(seq, text):
        body = {k: v for k, v in fault.items() if k not in ("irregularity", "seats", "procedure", "cards")}
        return _public({**body, "kind": "notice", "seq": seq, "notice": "device-recovered", "text": text,
                        "rule": ""}, seq)
    room.feed(f"{ROOT}/event", recovered(4, "camera: relit cleared"), 2.0)       # that fault only
    assert room.tile("t1")["alarms"] == ["outbox-filling", "camera: moved", "reader:seat:3: antenna-open"]
    room.feed(f"{ROOT}/event", recovered(5, "reader:seat:3: working again"), 2.0)  # every fault of the device
    assert room.tile("t1")["alarms"] == ["outbox-filling", "camera: moved"]


def test_messages_not_of_their_table_are_counted_not_shown():
    room = Room()
    assert room.feed(f"{ROOT}/status", {**_status("online", 1), "table": "t2"}, 1.0) == []
    assert room.feed(f"{ROOT}/status", b"\x00", 1.0) == []
    assert room.feed("pokerhall/v1/table/t1/cmd/pause", _status("online", 1), 1.0) == []
    assert room.bad == 3 and room.tables() == []


def test_hand_for_hand_pauses_each_table_at_its_hand_end_and_resumes_all_together():
    h = HandForHand()
    assert h.start({"t1": True, "t2": False, "t3": True}, 50.0) == [Order(("t2",), True)]
    assert h.view()["tables"] == {"t1": "playing", "t2": "done", "t3": "playing"}
    assert h.hand_ended("t2") == []                       # already done
    assert h.hand_ended("t1") == [Order(("t1",), True)]
    assert h.hand_ended("t3") == [Order(("t3",), True), Order(("t1", "t2", "t3"), False)]
    assert h.view()["round"] == 2 and set(h.view()["tables"].values()) == {"playing"}
    assert h.hand_ended("t1") == [Order(("t1",), True)]
    assert h.stop() == [Order(("t1",), False)]
    assert h.view() == {"active": False, "round": 2, "tables": {}, "since": None}
    assert h.hand_ended("t2") == []


def test_hand_for_hand_with_every_table_between_hands_starts_the_next_hand_everywhere_at_once():
    h = HandForHand()
    assert h.start({"t1": False, "t2": False}, 0.0) == [Order(("t1", "t2"), True), Order(("t1", "t2"), False)]


def test_accounts_hash_passwords_throttle_failures_and_expire_sessions(tmp_path):
    users = tmp_path / "users.toml"
    add_user(users, "marie", "td", "correct horse battery")
    add_user(users, "paul", "floor", "another good one")
    assert "correct horse" not in users.read_text() and users.stat().st_mode & 0o777 == 0o600
    loaded = load_users(users)
    assert {u.name: u.role for u in loaded.values()} == {"marie": "td", "paul": "floor"}
    now = [1000.0]
    accounts = Accounts(loaded, session_ttl=60, clock=lambda: now[0])
    session = accounts.login("marie", "correct horse battery", "10.0.0.1")
    assert session is not None and not isinstance(session, float)
    assert accounts.session(session.token) is session
    for _ in range(5):
        assert accounts.login("paul", "wrong", "10.0.0.2") is None
    wait = accounts.login("paul", "another good one", "10.0.0.2")
    assert isinstance(wait, float) and 0 < wait <= 300          # throttled, even with the right password
    now[0] += 301
    assert not isinstance(accounts.login("paul", "another good one", "10.0.0.2"), float)
    assert accounts.session(session.token) is None               # expired after 60 s
    with pytest.raises(ValueError, match="role"):
        add_user(users, "x", "admin", "long enough password")


def test_the_throttle_counts_names_and_addresses_apart():
    t = Throttle(limit=2, window=10)
    t.failed(("user:a", "addr:1"), 0.0)
    t.failed(("user:b", "addr:1"), 1.0)
    assert t.wait(("user:c", "addr:1"), 2.0) == pytest.approx(8.0)      # the address is throttled
    assert t.wait(("user:a", "addr:2"), 2.0) == 0.0
    assert t.wait(("user:c", "addr:1"), 10.0) == 0.0


def test_roles_capabilities_as_documented():
    assert "holes" in CAPABILITIES["surveillance"] and "command" not in CAPABILITIES["surveillance"]
    assert not {"holes", "table", "command"} & CAPABILITIES["floor"]
    assert "holes" not in CAPABILITIES["td"]
    assert User("a", "floor", "$argon2id$").can == CAPABILITIES["floor"]


def test_a_users_file_with_a_bad_role_names_the_file_and_key(tmp_path):
    from firmware_host.configfile import ConfigError
    path = tmp_path / "users.toml"
    path.write_text('[users.marie]\nrole = "admin"\nhash = "$argon2id$x"\n')
    with pytest.raises(ConfigError, match=r"users.toml.*users.marie.role"):
        load_users(path)


def test_phh_for_the_td_hides_the_hole_cards_never_shown():
    from pokerkit import HandHistory
    record = HandHistory(variant="NT", ante_trimming_status=True, antes=[0, 0], blinds_or_straddles=[1, 2],
                         min_bet=2, starting_stacks=[100, 100],
                         actions=["d dh p1 AsKs", "d dh p2 7c2d", "p2 cc", "p1 cc", "d db AhKh2c", "p1 cc", "p2 cc",
                                  "d db 3d", "p1 cc", "p2 cc", "d db 4s", "p1 cc", "p2 cc", "p1 sm AsKs", "p2 sm -"],
                         user_defined_fields={"_irregularities": [
                             {"kind": "card-to-wrong-seat", "cards": ["7c", "Ah"], "procedure": "7c read at seat 1; Ah",
                              "resolution": {"by": "td", "effect": "7c back to seat 2"}}]})
    masked = mask_holes(record)
    assert masked.actions[:2] == ["d dh p1 AsKs", "d dh p2 ????"]
    item = masked.user_defined_fields["_irregularities"][0]
    assert (item["cards"], item["procedure"], item["resolution"]["effect"]) == (
        ["XX", "Ah"], "XX read at seat 1; Ah", "XX back to seat 2")


def test_hall_run_with_a_bad_users_file_says_which_in_one_line_before_anything_runs(tmp_path, capsys):
    from firmware_host.cli.main import main
    from hall_helpers import hall_config
    hall_config(tmp_path, 1, dashboard={"t1": "test-key-0123456789abcdef"})
    (tmp_path / "users.toml").write_text('[users.marie]\nrole = "td"\nhash = "plain-text-password"\n')
    assert main(["hall", "run", "--config", str(tmp_path / "hall.toml")]) == 2
    out = capsys.readouterr()
    assert "users.marie.hash" in out.err and "argon2" in out.err and "archiving" not in out.out


def test_the_store_lists_finished_hands_and_one_hands_events_by_index(tmp_path):
    """The table page reads the last hands' ends and one hand's events, not every event of the table."""
    from hall.archive import parse
    from hall.export import hands
    from hall.store import open_store
    secure, _ = expected_streams()
    with open_store(str(tmp_path / "a.sqlite")) as store:
        batch = [parse("pokerhall/v1/secure/table/t1/event",
                       mc.dumps(secure_payload(e, "t1", "boot-a", k)).encode(), 2.0)
                 for k, e in enumerate(secure, 1)]
        assert all(store.add(batch, 3.0))
        every = hands(store, "t1")
        assert [(e["session"], e["hand"]) for e in store.ended("t1")] == [(h.session, h.number) for h in every][::-1]
        assert len(store.ended("t1", limit=1)) == 1
        last = every[-1]
        assert store.hand_events("t1", last.session, last.number) == [
            e for e in store.events("t1") if e["hand"] == last.number]
        assert store.hand_events("t1", last.session, 99) == []
