"""The TD's dashboard over HTTP (issue 16): ``tablectl hall run`` from the shipped example config, the shipped
broker, tables playing the demo; who sees what, who may do what, commands signed with the table's key and
applied by the table's engine, hand-for-hand from the tables' own hand ends."""
from __future__ import annotations

import json
import threading
import time

import pytest

from dashboard_helpers import Client, Hall, Table, demo_marks, wait_for
from firmware_host.sim.demo import script
from test_publish import cards_in, expected_streams


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dashboard")
    hall = Hall(directory, hole_card_delay=2.0)
    try:
        yield hall
    finally:
        hall.close()


def phh_cards(text):
    """Every card a PHH text names: in its actions (dealt, board, shown) and its user fields."""
    import io

    from pokerkit import HandHistory
    found = set()
    for record in HandHistory.load_all(io.BytesIO(text.encode())):
        for action in record.actions:
            parts = action.split()
            cards = parts[-1] if parts[1] in ("dh", "db") else parts[2] if parts[1] == "sm" else ""
            found |= {cards[i:i + 2] for i in range(0, len(cards), 2)} - {"??", "-"}
        found |= cards_in(json.dumps(record.user_defined_fields))
    return found


def _tile(client, table):
    return next((t for t in client.request("/api/room")[1].get("tables", []) if t["table"] == table), None)


def test_without_a_session_nothing_is_served(hall):
    c = Client(hall.url)
    for path in ("/api/me", "/api/room", "/api/stream", "/api/table/t1"):
        assert c.request(path)[0] == 401, path
    status, _, headers = c.request("/api/command", {"tables": ["t1"], "command": "pause", "args": {"paused": True}})
    assert status == 401
    assert "default-src 'self'" in c.request("/login")[2]["Content-Security-Policy"]


def test_a_wrong_password_is_refused_and_repeated_failures_are_rate_limited(hall):
    c = Client(hall.url)
    assert c.login("lucie", "not-her-password") == 401
    codes = [c.login("lucie", "still-wrong") for _ in range(5)]
    assert codes[-1] == 429
    status, page, headers = c.request("/login")
    assert status == 200
    # even the right password waits now (the name is throttled), and says how long
    token = page.split('name="csrf" value="')[1].split('"')[0]
    status, text, headers = c.request("/login", form={"username": "lucie", "password": "password-of-lucie",
                                                      "csrf": token})
    assert status == 429 and int(headers["Retry-After"]) > 0


def test_a_login_form_without_its_csrf_token_is_refused(hall):
    c = Client(hall.url)
    status, _, _ = c.request("/login", form={"username": "marie", "password": "password-of-marie", "csrf": "forged"})
    assert status == 403
    assert c.request("/api/me")[0] == 401


def test_each_role_sees_and_may_do_what_it_is_given_and_no_more(hall, tmp_path):
    table = Table(tmp_path, hall.broker.port, "t1")
    marks = demo_marks()
    td, floor, surv = Client(hall.url), Client(hall.url), Client(hall.url)
    for c, name in ((td, "marie"), (floor, "paul"), (surv, "sam")):
        assert c.login(name) == 200
    try:
        streams: dict[str, list] = {}
        threads = [threading.Thread(target=lambda c=c, n=n: streams.__setitem__(n, c.stream(8)))
                   for c, n in ((td, "td"), (floor, "floor"), (surv, "surveillance"))]
        for t in threads:
            t.start()
        time.sleep(1.0)
        table.gate.open_to(marks["hand1_end"])
        for t in threads:
            t.join()
        assert wait_for(lambda: (_tile(td, "t1") or {}).get("hand") == 1)
        secure, _ = expected_streams(script()[:marks["hand1_end"]])
        holes = {e["card"] for e in secure if e["kind"] == "hole-card-dealt"}
        shown = {c for e in secure if e["kind"] == "hand-shown" for c in e["cards"]}
        secret = holes - shown
        # floor: the room and the queue; no table page, no PHH, no command; no hole card anywhere
        assert floor.request("/api/table/t1")[0] == 403
        assert "queue" in floor.request("/api/room")[1]
        assert floor.request("/api/command", {"tables": ["t1"], "command": "pause", "args": {"paused": True}})[0] == 403
        assert floor.request("/api/hand-for-hand", {"action": "start"})[0] == 403
        # the TD: the table page without hole cards; the surveillance: no queue, no command
        page = td.request("/api/table/t1")[1]
        assert all(s["holes"] is None for s in page["seats"]) and page["hands"]
        assert "queue" not in surv.request("/api/room")[1]
        assert surv.request("/api/command", {"tables": ["t1"], "command": "pause", "args": {"paused": True}})[0] == 403
        # the streams: only the surveillance's carries hole cards, and only as `holes` events
        names = {role: {n for n, _ in s} for role, s in streams.items()}
        assert "tile" in names["floor"] and "action" not in names["floor"] and "holes" not in names["floor"]
        assert "action" in names["td"] and "holes" not in names["td"]
        assert "holes" in names["surveillance"]
        for role in ("td", "floor"):
            text = json.dumps(streams[role])
            assert not secret & cards_in(text), role
        released = {c for n, d in streams["surveillance"] if n == "holes" for c in d["cards"]}
        assert released and released <= holes
        seen = surv.request("/api/table/t1")[1]
        assert {c for s in seen["seats"] for c in s["holes"] or ()} <= holes
        # PHH: the TD's hides what was never shown, the surveillance's (after the delay) does not
        hand = page["hands"][0]
        path = f"/api/table/t1/hand/{hand['session']}/{hand['hand']}.phh"
        td_text, surv_text = td.request(path)[1], surv.request(path)[1]
        assert "????" in td_text and not secret & phh_cards(td_text)
        assert "????" not in surv_text and secret <= phh_cards(surv_text)
        assert floor.request(path)[0] == 403
        assert td.request("/api/table/t1/hand/..%2f..%2fetc/1.phh")[0] == 404
    finally:
        table.close()


def test_a_post_without_the_sessions_csrf_token_changes_nothing(hall):
    td = Client(hall.url)
    assert td.login("marie") == 200
    status, _, _ = td.request("/api/command", {"tables": ["t1"], "command": "pause", "args": {"paused": True}},
                              csrf="not-the-token")
    assert status == 403
    status, body, _ = td.request("/api/command", {"tables": ["t9"], "command": "pause", "args": {"paused": True}})
    assert status == 400 and "no command key" in body["error"]
    status, body, _ = td.request("/api/command", {"tables": ["t1"], "command": "reboot", "args": {}})
    assert status == 400 and "command must be one of" in body["error"]


def test_a_command_no_table_answers_says_no_reply_after_the_halls_timeout(hall):
    """A table with a key but not running (or not yet READY: a command before its subscription is
    acknowledged reaches nobody) gets no reply: the TD is told so, after ``reply_timeout`` (5 s)."""
    td = Client(hall.url)
    assert td.login("marie") == 200
    started = time.monotonic()
    status, body, _ = td.request("/api/command", {"tables": ["t2"], "command": "pause", "args": {"paused": True}})
    waited = time.monotonic() - started
    assert status == 200
    (reply,) = body["replies"]
    assert reply["table"] == "t2" and reply["status"] == "no-reply" and reply["message"] == "no reply within 5 s"
    assert 4.5 <= waited < 15


def test_the_td_resolves_an_irregularity_and_the_tables_engine_applies_it(hall, tmp_path):
    table = Table(tmp_path, hall.broker.port, "t1")
    marks = demo_marks()
    floor = Client(hall.url)
    assert floor.login("paul") == 200
    try:
        table.gate.open_to(marks["hold"])
        queue = wait_for(lambda: floor.request("/api/room")[1]["queue"])
        item = queue[0]
        assert (item["table"], item["irregularity"], item["rule"]) == ("t1", "premature-card", "000 §39 (TDA RP-5)")
        assert item["procedure"] and item["procedure_fr"] and item["options"][0] == "return-card"
        assert _tile(floor, "t1")["open"] == 1
        status, body, _ = floor.request("/api/command", {"tables": ["t1"], "command": "resolve",
                                                         "args": {"decision": item["options"][0]}})
        assert status == 200
        reply = body["replies"][0]
        assert (reply["table"], reply["status"]) == ("t1", "ok"), reply
        assert any(e["kind"] == "irregularity-resolved" for e in reply["events"])
        assert wait_for(lambda: floor.request("/api/room")[1]["queue"] == [])
        assert _tile(floor, "t1")["open"] == 0
        # nothing on hold any more: the table's reply says what its engine made of it, nothing is resolved twice
        status, body, _ = floor.request("/api/command", {"tables": ["t1"], "command": "resolve",
                                                         "args": {"decision": "return-card"}})
        events = body["replies"][0]["events"] or []
        assert [e.get("irregularity") for e in events] == ["nothing-to-resolve"]
    finally:
        table.close()


def test_hand_for_hand_pauses_each_table_at_its_hands_end_then_resumes_all_at_once(hall, tmp_path):
    t1, t2 = Table(tmp_path, hall.broker.port, "t1"), Table(tmp_path, hall.broker.port, "t2")
    marks = demo_marks()
    td = Client(hall.url)
    assert td.login("marie") == 200

    def notices(name):
        page = td.request(f"/api/table/{name}")[1]
        return [a["text"] for a in page.get("actions", []) if a["kind"] == "notice"]
    try:
        t1.gate.open_to(marks["hand1_end"] - 3)          # t1 in its first hand
        t2.gate.open_to(marks["hand1_end"])              # t2 has finished it
        assert wait_for(lambda: (_tile(td, "t1") or {}).get("in_hand") and _tile(td, "t2")
                        and not _tile(td, "t2")["in_hand"] and _tile(td, "t2")["hand"] == 1)
        status, h4h, _ = td.request("/api/hand-for-hand", {"action": "start"})
        assert status == 200 and h4h["tables"] == {"t1": "playing", "t2": "done"}
        assert wait_for(lambda: _tile(td, "t2")["paused"])
        assert not _tile(td, "t1")["paused"]
        assert (_tile(td, "t1")["h4h"], _tile(td, "t2")["h4h"]) == ("playing", "done")
        t1.gate.open_to(marks["hand1_end"])              # t1's hand ends: it pauses, and all resume together
        assert wait_for(lambda: td.request("/api/room")[1]["h4h"]["round"] == 2)
        assert wait_for(lambda: not _tile(td, "t1")["paused"] and not _tile(td, "t2")["paused"])
        assert any("paused" in n for n in notices("t1")) or _tile(td, "t1")["hand"] == 1
        status, h4h, _ = td.request("/api/hand-for-hand", {"action": "stop"})
        assert status == 200 and h4h["active"] is False
    finally:
        t1.close()
        t2.close()


def test_a_restarted_hall_keeps_the_open_irregularity_and_the_hand_from_its_archive(hall, tmp_path):
    """The public irregularity is not retained: after ``tablectl hall run`` restarts, the queue and the hand's
    actions come back from the archive (and the table's page still answers), then the TD resolves as before."""
    table = Table(tmp_path, hall.broker.port, "t1")
    marks = demo_marks()
    td = Client(hall.url)
    assert td.login("marie") == 200
    try:
        table.gate.open_to(marks["hold"])
        before = wait_for(lambda: td.request("/api/room")[1]["queue"])
        actions = wait_for(lambda: td.request("/api/table/t1")[1]["actions"])
        time.sleep(1.0)                                  # the archive has stored what the table said
        hall.restart()
        td = Client(hall.url)
        assert td.login("marie") == 200

        def untimed(items):               # an item's time is its message's: each topic stamps its own
            return [{k: v for k, v in i.items() if k != "time"} for i in items]
        assert untimed(td.request("/api/room")[1]["queue"]) == untimed(before)     # cards masked as they were
        after = td.request("/api/table/t1")[1]
        assert [(a["seq"], a["text"]) for a in after["actions"]] == [(a["seq"], a["text"]) for a in actions]
        assert not {c for a in after["actions"] for c in ("hole-card-dealt", "card-burned") if a["kind"] == c}
        status, body, _ = td.request("/api/command", {"tables": ["t1"], "command": "resolve",
                                                      "args": {"decision": before[0]["options"][0]}})
        assert body["replies"][0]["status"] == "ok"
        assert wait_for(lambda: td.request("/api/room")[1]["queue"] == [])
    finally:
        table.close()
