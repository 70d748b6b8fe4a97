"""The TD's dashboard in a real browser (issue 16): Debian's Chromium, headless, driven by Playwright, against
``tablectl hall run`` from the shipped example config and the shipped broker, tables playing the demo.

Set ``DASHBOARD_SCREENSHOTS=DIR`` to keep the screenshots of the room, the queue and a table page (the ones
in docs/ were made so); otherwise they go to the test's temporary folder.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from dashboard_helpers import TABLECTL, Hall, Table, demo_marks, password
from firmware_host.sim.broker import apt_install
from firmware_host.sim.demo import script
from hall.bench import CHROMIUM_ARGS
from hall.bench import chromium as system_chromium
from mqtt_helpers import user, write_config
from test_publish import cards_in, expected_streams

RECORD_STREAM = """
(() => {
  window.__stream = [];
  const Original = window.EventSource;
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    const add = source.addEventListener.bind(source);
    source.addEventListener = (name, listener, opts) => add(name, (e) => {
      window.__stream.push([name, e.data]);
      listener(e);
    }, opts);
    return source;
  };
  window.EventSource.prototype = Original.prototype;
})();
"""
"""Keeps every event-stream message the page receives (what the server sent to this login)."""


@pytest.fixture(scope="module")
def browser():
    if not Path("/usr/bin/chromium").exists():
        why = apt_install("chromium")
        assert not why, f"Chromium is needed (apt-get install chromium): {why}"
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=system_chromium(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    hall = Hall(tmp_path_factory.mktemp("dashboard-browser"), hole_card_delay=1.0, tables=("t1", "t2"))
    try:
        yield hall
    finally:
        hall.close()


@pytest.fixture
def shots(tmp_path):
    where = Path(os.environ.get("DASHBOARD_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def _login(browser, hall, name, width=1280, height=900, instrumented=True):
    """A new browser of *name*, logged in. *instrumented*: the test reads the page's own variables
    (Playwright evaluates them as script, which the dashboard's Content-Security-Policy forbids: it is lifted
    for that browser alone; an uninstrumented one runs under the policy and records any violation)."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="fr-FR",
                                  bypass_csp=instrumented)
    page = context.new_page()
    page.violations, page.errors = [], []
    page.on("console", lambda m: page.violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))      # an exception in the page's code
    if instrumented:
        page.add_init_script(RECORD_STREAM)
    page.goto(hall.url + "/")
    assert page.url.endswith("/login")
    page.fill("#username", name)
    page.fill("#password", password(name))
    page.click("#login")
    page.wait_for_selector("#me .user")
    return page


def test_the_demo_hands_appear_live_and_the_td_resolves_an_irregularity_from_the_page(browser, hall, tmp_path,
                                                                                     shots):
    marks = demo_marks()
    table = Table(tmp_path, hall.broker.port, "t1")
    page = _login(browser, hall, "marie")
    try:
        tile = page.locator('#room .tile[data-table="t1"]')
        table.gate.open_to(marks["hand1_end"] - 25)
        tile.wait_for()
        page.wait_for_selector('#room .tile[data-table="t1"][data-hand="1"]')
        # a tile changes in place: the element a TD is pressing stays the same one (the click counts)
        element, before = tile.element_handle(), tile.inner_text()
        table.gate.open_to(marks["hand1_end"] - 5)
        page.wait_for_function("([node, text]) => node.innerText !== text", arg=[element, before])
        assert element.evaluate("node => node.isConnected")
        # the table's page: the hand's actions arrive as they happen
        tile.click()
        page.wait_for_selector('#table-page[data-table="t1"] .seat[data-seat]')
        # (the page shows the current hand's actions: hand 2 starts on the way to the hold, so wait for a
        # later seq, not for more items than now; that raced with the page's load under load in CI)
        last = page.locator("#actions li[data-seq]").evaluate_all(
            "items => Math.max(-1, ...items.map(li => Number(li.dataset.seq)))")
        table.gate.open_to(marks["hold"])
        page.wait_for_function("last => [...document.querySelectorAll('#actions li[data-seq]')]"
                               ".some(li => Number(li.dataset.seq) > last)", arg=last)
        page.screenshot(path=str(shots / "dashboard-table.png"), full_page=True)
        assert page.locator("span.holes").count() == 0                 # the TD never sees hole cards
        # the irregularity: in the queue with its rule, procedure and options, the recommended one first
        page.goto(hall.url + "/#queue")
        item = page.locator('#queue .item[data-table="t1"]')
        item.wait_for()
        assert item.get_attribute("data-irregularity") == "premature-card"
        assert "000 §39" in item.locator(".rule").inner_text()
        first = item.locator("button.resolve").first
        assert first.get_attribute("data-option") == "return-card" and "recommended" in first.get_attribute("class")
        page.goto(hall.url + "/#room")
        page.wait_for_selector('#room .tile.irregular[data-table="t1"][data-open="1"]')
        page.screenshot(path=str(shots / "dashboard-room.png"), full_page=True)
        page.goto(hall.url + "/#queue")
        item.wait_for()
        page.screenshot(path=str(shots / "dashboard-queue.png"), full_page=True)
        first.click()
        # the table's engine applied it: the reply is shown, the item leaves, the tile clears
        page.wait_for_selector('#queue .item[data-table="t1"]', state="detached", timeout=15000)
        page.goto(hall.url + "/#room")
        page.wait_for_selector('#room .tile[data-table="t1"][data-open="0"]')
        assert page.locator('#room .tile.irregular[data-table="t1"]').count() == 0
        page.goto(hall.url + "/#table/t1")                # the engine's irregularity-resolved, as the table said
        page.wait_for_selector('#actions li[data-kind="irregularity-resolved"]')
        assert page.errors == []
    finally:
        page.context.close()
        table.close()


def test_a_floor_login_never_receives_a_hole_card_in_the_page_or_the_stream(browser, hall, tmp_path):
    marks = demo_marks()
    floor = _login(browser, hall, "paul")
    watcher = _login(browser, hall, "sam")          # the surveillance, for contrast: it does get them
    table = Table(tmp_path, hall.broker.port, "t2")
    try:
        table.gate.open_to(marks["hand1_end"])
        floor.wait_for_selector('#room .tile[data-table="t2"][data-hand="1"]')
        secure, _ = expected_streams(script()[:marks["hand1_end"]])
        holes = {e["card"] for e in secure if e["kind"] == "hole-card-dealt"}
        shown = {c for e in secure if e["kind"] == "hand-shown" for c in e["cards"]}
        secret = holes - shown
        watcher.goto(hall.url + "/#table/t2")
        watcher.wait_for_selector("span.holes", timeout=15000)             # released after the delay
        time.sleep(2.0)
        assert floor.locator("#nav a[data-view=\"queue\"]").is_visible()
        floor.goto(hall.url + "/#table/t2")                                  # not the floor's: refused
        time.sleep(1.0)
        shown_cards = set(floor.eval_on_selector_all("[data-card]", "nodes => nodes.map(n => n.dataset.card)"))
        assert not secret & (cards_in(floor.inner_text("body")) | shown_cards), "a hole card in the floor's page"
        received = [json.loads(d) for _, d in floor.evaluate("window.__stream") if isinstance(d, str)]
        assert not secret & cards_in(json.dumps(received)), "a hole card in the floor's stream"
        assert "holes" not in {n for n, _ in floor.evaluate("window.__stream")}
        seen = {c for n, d in watcher.evaluate("window.__stream") if n == "holes" and isinstance(d, str)
                for c in json.loads(d)["cards"]}
        assert seen and seen <= holes
    finally:
        floor.context.close()
        watcher.context.close()
        table.close()


def test_a_table_killed_with_sigkill_turns_offline_on_the_page(browser, hall, tmp_path):
    config = write_config(tmp_path / "t2", hall.broker.port, table="t2", keepalive=2, **user("table-t2"))
    run = subprocess.Popen([TABLECTL, "run", "--config", str(config), "--source", "demo", "--speed", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = _login(browser, hall, "paul", width=390, height=844, instrumented=False)     # a phone
    try:
        page.wait_for_selector('#room .tile[data-table="t2"][data-status="online"]', timeout=30000)
        run.send_signal(signal.SIGKILL)
        run.wait(10)
        killed = time.monotonic()
        page.wait_for_selector('#room .tile.offline[data-table="t2"][data-status="offline"]', timeout=10000)
        assert time.monotonic() - killed < 2 * 3        # within the table's keepalive (2 s) and a half, and slack
        assert page.violations == []
    finally:
        if run.poll() is None:
            run.kill()
        page.context.close()


def test_the_td_commands_from_the_page_and_every_reply_is_shown(browser, hall, tmp_path):
    """Set the level of every table, pause and resume one, void a hand only once confirmed: each through the
    signed command path, each table's reply on the page."""
    marks = demo_marks()
    table = Table(tmp_path, hall.broker.port, "t1")
    page = _login(browser, hall, "marie")
    try:
        table.gate.open_to(marks["hand1_end"])
        page.wait_for_selector('#room .tile[data-table="t1"][data-hand="1"]')
        page.goto(hall.url + "/#commands")
        page.select_option("#cmd-table", "all")
        page.select_option("#cmd-name", "set-level")
        page.fill("#arg-small-blind", "100")
        page.fill("#arg-big-blind", "200")
        page.click("#cmd-send")
        page.wait_for_selector('#replies .reply-batch.latest .reply[data-table="t1"][data-status="ok"]')
        page.select_option("#cmd-table", "t1")
        page.select_option("#cmd-name", "pause")
        page.click("#cmd-send")
        page.goto(hall.url + "/#room")
        page.wait_for_selector('#room .tile.paused[data-table="t1"]')
        page.goto(hall.url + "/#commands")
        page.select_option("#cmd-table", "t1")
        page.select_option("#cmd-name", "resume")
        page.click("#cmd-send")
        page.goto(hall.url + "/#room")
        page.wait_for_selector('#room .tile[data-table="t1"]:not(.paused)')
        # void-hand asks first: refused, nothing is sent; accepted, the table answers
        page.goto(hall.url + "/#commands")
        page.select_option("#cmd-table", "t1")
        page.select_option("#cmd-name", "void-hand")
        page.fill("#arg-hand", "1")
        page.fill("#arg-reason", "test")
        batches = page.locator("#replies .reply-batch").count()
        page.once("dialog", lambda dialog: dialog.dismiss())
        page.click("#cmd-send")
        time.sleep(1.0)
        assert page.locator("#replies .reply-batch").count() == batches
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#cmd-send")
        page.wait_for_selector('#replies .reply-batch.latest[data-command="void-hand"] .reply[data-table="t1"]')
        assert page.locator("#replies .reply-batch").count() == batches + 1
    finally:
        page.context.close()
        table.close()
