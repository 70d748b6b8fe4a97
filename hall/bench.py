"""``tablectl bench hall``: the archive under 200 tables' events, one worker then two sharing a subscription,
on SQLite and on PostgreSQL. Simulated tables publish the demo session's secure events (real payloads, each
with its envelope stamped at publish) at a fixed rate, each its own MQTT connection, spread over processes;
archive workers run in processes of their own. Figures: events ingested per second, publish-to-commit
delay (median, p99), events lost and duplicated (both must be 0)."""
from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from firmware_host.cli.common import percentile

TABLES_PER_PROCESS = 50
"""paho waits with select(): descriptors past 1024 fail, so the tables are spread over processes."""


def register(bench: Any) -> None:
    hall = bench.add_parser("hall", help="the archive under 200 tables: ingest rate, publish-to-commit p99, lost")
    hall.add_argument("--tables", type=int, default=200)
    hall.add_argument("--table-rate", type=float, default=5.0,
                      help="events per second per table (a live table makes about 0.5: ten times that)")
    hall.add_argument("--seconds", type=float, default=20.0, help="how long the tables publish, per run")
    hall.add_argument("--stores", default="sqlite,postgresql", help="which stores, comma-separated")
    hall.add_argument("--no-dashboard", dest="dashboard", action="store_false",
                      help="leave out the dashboard run (the page open in headless Chromium)")
    hall.set_defaults(func=cmd_bench_hall)


def _payloads() -> list[dict[str, Any]]:
    """The demo session's engine events (secure: hole cards included), as a table makes them."""
    from firmware_host.rules.engine import HandEngine
    from firmware_host.rules.profile import builtin_profile
    from firmware_host.sim.demo import script
    engine = HandEngine(builtin_profile("000"), "x")
    return [json.loads(e.to_json()) for o in script() for e in engine.feed(o)]


def _connect(port: int, names: list[str]) -> list[Any]:
    """One MQTT connection per simulated table, each with its network loop running."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    clients = []
    for name in names:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{name}", protocol=mqtt.MQTTv5)
        client.max_queued_messages_set(0)
        client.connect("127.0.0.1", port, 30)
        client.loop_start()
        clients.append(client)
    return clients


def _paced(tables: int, rate: float, seconds: float) -> Iterator[tuple[int, int, int]]:
    """(message number, table index, that table's count from 1), *rate* a second per table for *seconds*."""
    start, n, total = time.perf_counter(), 0, rate * tables
    while (now := time.perf_counter()) - start < seconds:
        due = start + n / total
        if now < due:
            time.sleep(min(0.002, due - now))
            continue
        yield n, n % tables, n // tables + 1
        n += 1


def _tables(port: int, names: list[str], rate: float, seconds: float, go: Any, results: Any) -> None:
    """One process of simulated tables: each publishes the demo's events, cycling, at *rate* a second."""
    from firmware_host.mqtt import contract as mc

    logging.basicConfig(level=logging.ERROR)
    events = _payloads()
    clients = _connect(port, names)
    results.put(("ready", len(clients)))
    go.wait()
    boot = uuid.uuid4().hex[:8]
    infos = []
    start = time.perf_counter()
    for _, k, seq in _paced(len(names), rate, seconds):
        name = names[k]
        body = {**events[(seq - 1) % len(events)], "table": name, "seq": seq}
        payload = mc.envelope("secure-event", name, boot, seq, mc.event_id(name, boot, seq), time.time(), event=body)
        infos.append(clients[k].publish(mc.Topics(name).secure_event, mc.dumps(payload), qos=1))
    unacked = 0
    for info in infos:
        try:
            info.wait_for_publish(30)
        except (RuntimeError, ValueError):
            pass
        unacked += not info.is_published()
    for client in clients:
        client.disconnect()
        client.loop_stop()
    results.put(("done", {"published": len(infos), "unacked": unacked, "seconds": time.perf_counter() - start}))


def _worker(port: int, store: str, client_id: str, group: str, stop: Any, results: Any) -> None:
    """One archive worker process, until *stop*."""
    from firmware_host.mqtt.publisher import BrokerConfig
    from hall.archive import Archive
    from hall.config import ArchiveConfig, HallConfig
    from hall.store import open_store

    logging.basicConfig(level=logging.ERROR)
    config = HallConfig(BrokerConfig("127.0.0.1", port, keepalive=30, client_id=client_id),
                        ArchiveConfig(store=store, share_group=group, gap_grace=3600))
    with open_store(store) as db, Archive(config, db) as archive:
        results.put(("ready", archive.connected.wait(30)))
        stop.wait()
        archive.close()
        results.put(("done", dict(archive.counters)))


def _run(port: int, store_url: str, workers: int, args: argparse.Namespace, tag: str) -> dict[str, Any]:
    from hall.store import open_store

    ctx = multiprocessing.get_context("spawn")
    results, go, stop = ctx.Queue(), ctx.Event(), ctx.Event()
    group = f"bench{tag}" if workers > 1 else ""
    procs = [ctx.Process(target=_worker, args=(port, store_url, f"archive-{tag}-{k}", group, stop, results),
                         daemon=True) for k in range(workers)]
    for p in procs:
        p.start()
    if not all(results.get(timeout=60)[1] for _ in procs):
        raise RuntimeError("an archive worker could not connect")
    names = [f"t{tag}-{k + 1}" for k in range(args.tables)]
    groups = [names[i:i + TABLES_PER_PROCESS] for i in range(0, len(names), TABLES_PER_PROCESS)]
    tables = [ctx.Process(target=_tables, args=(port, g, args.table_rate, args.seconds, go, results), daemon=True)
              for g in groups]
    for p in tables:
        p.start()
    ready = sum(results.get(timeout=120)[1] for _ in tables)
    go.set()
    reports = [results.get(timeout=args.seconds + 120)[1] for _ in tables]
    for p in tables:
        p.join(30)
    published = sum(r["published"] for r in reports)
    with open_store(store_url) as store:
        end = time.monotonic() + 60
        while time.monotonic() < end and store.count() < published:
            time.sleep(0.2)
        stop.set()
        counters = [results.get(timeout=60)[1] for _ in procs]
        for p in procs:
            p.join(30)
        stored = store.count()
        delays = [d * 1000 for d in store.commit_delays()]
        first, last = store.span()
        duplicated = store.duplicated()
    return {"store": store_url.split(":")[0] if "://" in store_url else "sqlite", "workers": workers,
            "tables": args.tables, "connected": ready, "published": published,
            "unacked_by_broker": sum(r["unacked"] for r in reports), "stored": stored,
            "events_lost": published - stored, "events_duplicated": duplicated,
            "ingest_events_per_s": round(stored / max(last - first, 1e-6), 1),
            "commit_median_ms": round(statistics.median(delays), 1) if delays else None,
            "commit_p99_ms": round(percentile(delays, 99), 1) if delays else None,
            "per_worker_stored": [c.get("stored", 0) for c in counters]}


def _states(port: int, names: list[str], rate: float, seconds: float, go: Any, results: Any) -> None:
    """One process of simulated tables for the dashboard run: each says it is online, then publishes its
    retained ``state`` at *rate* a second, the hand number counting the changes; the publish times go back."""
    from firmware_host.mqtt import contract as mc

    logging.basicConfig(level=logging.ERROR)
    boot = uuid.uuid4().hex[:8]
    clients = _connect(port, names)
    for name, client in zip(names, clients):
        status = mc.envelope("status", name, boot, 1, f"{name}-{boot}-status-1", time.time(), status="online",
                             source="demo")
        client.publish(mc.Topics(name).status, mc.dumps(status), qos=1, retain=True)
    results.put(("ready", len(clients)))
    go.wait()
    sent: list[tuple[str, int, float]] = []
    for _, k, hand in _paced(len(names), rate, seconds):
        name = names[k]
        state = {"hand": hand, "in_hand": True, "last_seq": hand, "button": 1, "street": "preflop",
                 "blinds": [100, 200], "ante": 0, "board": [], "shown": {}, "folded": [],
                 "stacks": {str(s): 10000 for s in range(1, 10)}, "bets": {"1": 100, "2": 200}, "pot": hand}
        at = time.time()
        payload = mc.envelope("state", name, boot, hand + 1, f"{name}-{boot}-state-{hand}", at, state=state)
        clients[k].publish(mc.Topics(name).state, mc.dumps(payload), qos=1, retain=True)
        sent.append((name, hand, at))
    time.sleep(2.0)
    for client in clients:
        client.disconnect()
        client.loop_stop()
    results.put(("done", sent))


_WATCH = """() => {
  window.__seen = [];
  new MutationObserver((records) => {
    const now = Date.now();
    for (const r of records) {
      const tile = r.target;
      if (tile.classList && tile.classList.contains('tile'))
        window.__seen.push([tile.dataset.table, Number(tile.dataset.hand), now]);
    }
  }).observe(document.getElementById('room'), {subtree: true, attributes: true, attributeFilter: ['data-hand']});
}"""


def _dashboard_run(port: int, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """The dashboard served in this process, its page open in headless Chromium (logged in as the TD), while
    *args.tables* tables change their state at *args.table_rate* a second: publish-to-page delay, CPU."""
    import asyncio
    import resource
    import threading

    from playwright.sync_api import sync_playwright

    from firmware_host.mqtt.publisher import BrokerConfig
    from hall.config import DashboardConfig
    from hall.dashboard.accounts import add_user
    from hall.dashboard.server import Dashboard

    add_user(tmp / "users.toml", "bench", "td", "bench-password-0")
    config = DashboardConfig(broker=BrokerConfig("127.0.0.1", port, keepalive=30, client_id="bench-dashboard"),
                             users_file=tmp / "users.toml", keys={}, port=0, silent_after=3600)
    dashboard = Dashboard(config, str(tmp / "dashboard.sqlite"))
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    asyncio.run_coroutine_threadsafe(dashboard.start(), loop).result(30)
    if not dashboard.link.connected.wait(30):
        raise RuntimeError("the dashboard could not connect to the broker")
    ctx = multiprocessing.get_context("spawn")
    results, go = ctx.Queue(), ctx.Event()
    names = [f"d{k + 1}" for k in range(args.tables)]
    groups = [names[i:i + TABLES_PER_PROCESS] for i in range(0, len(names), TABLES_PER_PROCESS)]
    procs = [ctx.Process(target=_states, args=(port, g, args.table_rate, args.seconds, go, results), daemon=True)
             for g in groups]
    for p in procs:
        p.start()
    ready = sum(results.get(timeout=120)[1] for _ in procs)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1000}, bypass_csp=True)   # to read its clock
            page.goto(dashboard.url + "/login")
            page.fill("#username", "bench")
            page.fill("#password", "bench-password-0")
            page.click("#login")
            page.wait_for_function(f"document.querySelectorAll('#room .tile').length >= {len(names)}", timeout=60000)
            page.evaluate(_WATCH)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            before, wall, server = _task_seconds(cdp), time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
            go.set()
            sent = [row for _ in procs for row in results.get(timeout=args.seconds + 120)[1]]
            page.wait_for_timeout(2000)
            used, span = _task_seconds(cdp) - before, time.monotonic() - wall
            after = resource.getrusage(resource.RUSAGE_SELF)
            seen = page.evaluate("window.__seen")
            browser.close()
    finally:
        asyncio.run_coroutine_threadsafe(dashboard.close(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
    delays, shown, missed = _page_delays(sent, seen)
    return {"tables": len(names), "connected": ready, "published": len(sent), "shown": shown, "missed": missed,
            "page_median_ms": round(statistics.median(delays), 1) if delays else None,
            "page_p99_ms": round(percentile(delays, 99), 1) if delays else None,
            "page_cpu_s_per_s": round(used / span, 3),
            "server_cpu_s_per_s": round((after.ru_utime + after.ru_stime - server.ru_utime - server.ru_stime) / span,
                                        3)}


def _page_delays(sent: list[tuple[str, int, float]], seen: list[list[Any]]) -> tuple[list[float], int, int]:
    """Milliseconds from each state's publish to the page drawing it or a later one of the same table (a state
    superseded within one frame is drawn as the newer one), how many states were drawn themselves, and how many
    were never drawn, not even as a later one (lost to the TD).

    >>> _page_delays([("a", 1, 1.0), ("a", 2, 1.5), ("a", 3, 2.5)], [["a", 2, 2000.0]])
    ([1000.0, 500.0], 1, 1)
    """
    import bisect
    drawn: dict[str, tuple[list[int], list[float]]] = {}
    for table, hand, at in sorted(seen, key=lambda row: row[2]):
        hands, times = drawn.setdefault(str(table), ([], []))
        if not hands or hand > hands[-1]:
            hands.append(int(hand))
            times.append(float(at) / 1000)
    delays, missed = [], 0
    for table, hand, at in sent:
        hands, times = drawn.get(table, ([], []))
        k = bisect.bisect_left(hands, hand)
        if k == len(hands):
            missed += 1
        else:
            delays.append((times[k] - at) * 1000)
    shown = sum(len(h) for h, _ in drawn.values())
    return delays, shown, missed


def _task_seconds(cdp: Any) -> float:
    """The page's main-thread busy seconds so far (Chrome's ``TaskDuration`` metric)."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))


CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
"""Debian's Chromium, headless, with nothing reaching out to the network (the hall's machine has none)."""


def chromium() -> str:
    """Debian's Chromium (``apt-get install chromium``); Playwright never downloads a browser here."""
    import shutil
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        raise RuntimeError("no chromium: apt-get install chromium (the dashboard's benchmark and tests use it)")
    return found


def cmd_bench_hall(args: argparse.Namespace) -> int:
    import resource

    from firmware_host.sim.broker import LocalMosquitto
    from hall.store.local_postgres import LocalPostgres

    logging.basicConfig(level=logging.ERROR)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-hall-") as tmp, LocalMosquitto(tmp + "/broker") as broker:
        Path(tmp).chmod(0o755)
        pg = LocalPostgres(tmp + "/pg").start() if "postgresql" in stores else None
        try:
            print(f"Mosquitto on 127.0.0.1:{broker.port}; {args.tables} tables at {args.table_rate:g} events/s each "
                  f"for {args.seconds:g} s per run", flush=True)
            for kind in stores:
                for workers in (1, 2):
                    tag = f"{kind[0]}{workers}"
                    url = pg.url(f"bench_{tag}") if kind == "postgresql" and pg else f"{tmp}/archive-{tag}.sqlite"
                    run = _run(broker.port, url, workers, args, tag)
                    runs.append(run)
                    print(f"{kind:<10} {workers} worker(s): {run['stored']}/{run['published']} events stored, "
                          f"{run['ingest_events_per_s']} events/s, publish-to-commit median "
                          f"{run['commit_median_ms']} ms p99 {run['commit_p99_ms']} ms; lost {run['events_lost']}, "
                          f"duplicated {run['events_duplicated']}; per worker {run['per_worker_stored']}", flush=True)
            page = _dashboard_run(broker.port, args, Path(tmp)) if args.dashboard else None
        finally:
            if pg:
                pg.stop()
    if page is not None:
        print(f"dashboard: {page['tables']} tables, {page['published']} state changes published, "
              f"{page['shown']} drawn on the page (the others within a frame of a newer one), {page['missed']} "
              f"never shown; publish-to-page median "
              f"{page['page_median_ms']} ms p99 {page['page_p99_ms']} ms; the page's CPU "
              f"{page['page_cpu_s_per_s']} s per second, the server's {page['server_cpu_s_per_s']} s per second",
              flush=True)
    result = {"bench": "hall", "runs": runs, "dashboard": page,
              "dashboard_p99_ms": page["page_p99_ms"] if page else None,
              "events_lost": sum(r["events_lost"] for r in runs),
              "events_duplicated": sum(r["events_duplicated"] for r in runs),
              "ingest_events_per_s": min((r["ingest_events_per_s"] for r in runs), default=None),
              "commit_p99_ms": max((r["commit_p99_ms"] or 0 for r in runs), default=None)}
    print(json.dumps(result, sort_keys=True))
    return 0 if result["events_lost"] == 0 and result["events_duplicated"] == 0 else 1
