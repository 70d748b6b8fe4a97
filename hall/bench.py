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
    hall.set_defaults(func=cmd_bench_hall)


def _payloads() -> list[dict[str, Any]]:
    """The demo session's engine events (secure: hole cards included), as a table makes them."""
    from firmware_host.rules.engine import HandEngine
    from firmware_host.rules.profile import builtin_profile
    from firmware_host.sim.demo import script
    engine = HandEngine(builtin_profile("000"), "x")
    return [json.loads(e.to_json()) for o in script() for e in engine.feed(o)]


def _tables(port: int, names: list[str], rate: float, seconds: float, go: Any, results: Any) -> None:
    """One process of simulated tables: each publishes the demo's events, cycling, at *rate* a second."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from firmware_host.mqtt import contract as mc

    logging.basicConfig(level=logging.ERROR)
    events = _payloads()
    clients = []
    for name in names:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{name}", protocol=mqtt.MQTTv5)
        client.max_queued_messages_set(0)
        client.connect("127.0.0.1", port, 30)
        client.loop_start()
        clients.append(client)
    results.put(("ready", len(clients)))
    go.wait()
    boot = uuid.uuid4().hex[:8]
    infos = []
    start, n, total = time.perf_counter(), 0, rate * len(names)
    while (now := time.perf_counter()) - start < seconds:
        due = start + n / total
        if now < due:
            time.sleep(min(0.002, due - now))
            continue
        k, name = n % len(names), names[n % len(names)]
        seq = n // len(names) + 1
        body = {**events[(seq - 1) % len(events)], "table": name, "seq": seq}
        payload = mc.envelope("secure-event", name, boot, seq, mc.event_id(name, boot, seq), time.time(), event=body)
        infos.append(clients[k].publish(mc.Topics(name).secure_event, mc.dumps(payload), qos=1))
        n += 1
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
    results.put(("done", {"published": n, "unacked": unacked, "seconds": time.perf_counter() - start}))


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
        finally:
            if pg:
                pg.stop()
    result = {"bench": "hall", "runs": runs,
              "events_lost": sum(r["events_lost"] for r in runs),
              "events_duplicated": sum(r["events_duplicated"] for r in runs),
              "ingest_events_per_s": min(r["ingest_events_per_s"] for r in runs),
              "commit_p99_ms": max(r["commit_p99_ms"] or 0 for r in runs)}
    print(json.dumps(result, sort_keys=True))
    return 0 if result["events_lost"] == 0 and result["events_duplicated"] == 0 else 1
