"""The controller: ``tablectl run``, and ``tablectl bench mqtt`` (its publishing path measured)."""
from __future__ import annotations

import argparse
import json
import logging
import signal
import statistics
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware_host.cli.common import SPEED_HELP, Parsers, open_cameras, percentile, speed

if TYPE_CHECKING:
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Event as ProcessEvent

    from firmware_host.events import Event
    from firmware_host.hil.recording import Recording
    from firmware_host.mqtt.subscriber import Message, Subscriber
    from firmware_host.observations import Observation
    from firmware_host.service.config import Config
    from firmware_host.service.devices import Devices

log = logging.getLogger(__name__)


def register(parsers: Parsers) -> None:
    run = parsers.commands.add_parser("run", help="run the table controller: observations -> engine -> MQTT")
    run.add_argument("--config", required=True,
                     help="TOML config (example: hardware/mosquitto/table.example.toml, firmware_host/data/mosquitto)")
    source = run.add_mutually_exclusive_group(required=True)    # where the observations come from: say it
    source.add_argument("--source", default=None, choices=["demo"],
                        help="the built-in demo session (simulated: birth and status say so)")
    source.add_argument("--devices", default=None, metavar="TABLE_PROFILE",
                        help="read the real devices of this table profile (hardware/tables/*.toml): shoe, readers, "
                             "console")
    run.add_argument("--decks", default=None, help="with --devices: the deck registry directory")
    run.add_argument("--shoe", default=None,
                     help="with --devices: the shoe's serial port (default: the table profile's [shoe] port)")
    run.add_argument("--camera", action="append", default=[], metavar="NAME=INDEX",
                     help="with --devices: a chip camera (V4L2 device INDEX) calibrated as NAME; repeat per camera")
    run.add_argument("--calibration", default=".", metavar="DIR",
                     help="with --camera: where camera-NAME-table.json and camera-NAME-chips.json are")
    source.add_argument("--recording", default=None,
                        help="replay this recording through the drivers as the source (docs/recording.md; simulated)")
    run.add_argument("--speed", type=speed, default=10.0, help=f"the source's pace: {SPEED_HELP} (default: 10)")
    run.add_argument("--loops", type=int, default=1, help="play the demo session N times")
    run.add_argument("--exit-at-end", action="store_true",
                     help="exit once the source has ended and the outbox is drained")
    run.add_argument("--print", dest="print_events", action="store_true", help="print events readably")
    run.add_argument("--secrets", action="store_true", help="with --print: show hole and burn cards")
    run.add_argument("--events-out", default=None, help="append every payload sent, as JSON lines, to FILE")
    run.set_defaults(func=cmd_run)

    mqtt = parsers.bench.add_parser("mqtt", help="observation-to-subscriber latency, throughput, 200 tables at once")
    mqtt.add_argument("--events", type=int, default=10_000, help="events for latency and throughput (>= 10000)")
    mqtt.add_argument("--rate", type=float, default=400.0, help="observations per second in the latency run")
    mqtt.add_argument("--tables", type=int, default=200)
    mqtt.add_argument("--seconds", type=float, default=60.0, help="duration of the many-tables run")
    mqtt.add_argument("--table-rate", type=float, default=2.0,
                      help="observations per second per table (a real table makes about 1)")
    mqtt.set_defaults(func=bench_mqtt)


def cmd_run(args: argparse.Namespace) -> int:
    from firmware_host.cli.display import describe
    from firmware_host.hil.recording import load
    from firmware_host.rules.profile import resolve_profile
    from firmware_host.service.config import load_config
    from firmware_host.service.notify import Notifier, Supervisor
    from firmware_host.service.service import Service, demo_source

    config = load_config(args.config)  # a ConfigError (a RecordingError below) is main's one line and exit 2
    recording = load(args.recording) if args.recording else None
    profile = None
    if recording is not None:          # the table it was recorded at: its house rules and smallest chip
        profile = resolve_profile(recording.profile)
        if profile.id != config.profile:
            log.warning("the recording's house profile %s applies, not the config's %s", profile.id, config.profile)
    out = open(args.events_out, "a", encoding="utf-8") if args.events_out else None
    lock = threading.Lock()

    def on_payload(topic: str, payload: dict[str, Any]) -> None:
        if out is not None:
            with lock:
                out.write(json.dumps({"topic": topic, "payload": payload}, sort_keys=True) + "\n")
                out.flush()

    devices: Devices | None = None

    def on_event(event: Event) -> None:
        if devices is not None:
            devices.show((event,))
        if args.print_events:
            print(describe(event, show_secrets=args.secrets), flush=True)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        if args.devices:
            devices = _open_devices(args)
        kind = "devices" if devices is not None else "recording" if args.recording else "demo"
        service = Service(config, on_payload=on_payload if out else None, profile=profile,
                          on_event=on_event if (args.print_events or devices) else None, source=kind,
                          chip_unit=recording.chip_unit if recording else None)
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        if devices is not None:
            devices.close()
        return 2
    notifier = Notifier.from_env()       # systemd's Type=notify and watchdog; nothing outside systemd
    supervisor = Supervisor(notifier, service.publisher.connected.is_set,
                            devices.stalled if devices is not None else list)
    try:
        service.start()
        if devices is not None:
            service.feed_from(devices.observations(stop.is_set))
        elif recording is not None:
            service.feed_from(_recording_source(recording, args.speed, service.source_done))
        else:
            service.feed_from(demo_source(args.speed or 0, args.loops, skip=service.source_done))
        service.run(until_source_ends=args.exit_at_end, stop=stop, turn=supervisor.turn)
    finally:
        notifier.stopping()
        left = service.close(drain=5.0)   # counted once the last acknowledgements are in (issue 14 item 7)
        notifier.close()
        if devices is not None:
            devices.close()
        if out:
            out.close()
    if service.source_error:     # a damaged recording, a device source that broke: not a clean run
        print(f"error: the observation source failed: {service.source_error}", file=sys.stderr)
        return 1
    if left:
        print(f"{left} message(s) still in the outbox {config.outbox_path}: they are sent on the next start",
              file=sys.stderr)
        return 1
    return 0


def _open_devices(args: argparse.Namespace) -> Devices:
    """The real devices of ``--devices`` (a table profile) with the deck registry of ``--decks``."""
    from calibration.deck import Registry
    from calibration.wiring import load_wiring
    from drivers.zones import open_real
    from firmware_host.service.devices import Devices

    if not args.decks:
        raise ValueError("--devices needs --decks (the deck registry directory)")
    wiring = load_wiring(args.devices)      # every device's keys, and no pin wired twice
    registry = Registry.from_directory(args.decks)
    if not registry.decks:
        raise ValueError(f"{args.decks}: no registered deck (tablectl calibrate deck)")
    cameras = open_cameras(args.camera, Path(args.calibration))
    try:
        return Devices(shoe_port=args.shoe or wiring.shoe.port, registry=registry, readers=wiring.readers,
                       chips=open_real(wiring.readers), console_pins=wiring.console, cameras=cameras)
    except Exception:
        for feed in cameras:
            feed.close()
        raise


def _recording_source(recording: Recording, pace: float | None, skip: int) -> Iterator[Observation]:
    """A recording's observations through the drivers (paced at *pace*, None: flat out), the first *skip* dropped."""
    from firmware_host.hil.replay import Replay

    with Replay(recording) as replay:
        for n, obs in enumerate(replay.stream(pace), 1):
            if n > skip:
                yield obs


# -- bench mqtt -----------------------------------------------------------------------

class Arrivals:
    """When each (table, event seq) first reached the bench's subscriber (its clock: perf_counter)."""

    TOPIC = "pokerhall/v1/secure/table/+/event"

    def __init__(self) -> None:
        self.first: dict[tuple[str, int], float] = {}

    def note(self, message: Message) -> None:
        self.first.setdefault((message.payload["table"], message.payload["event"]["seq"]), message.at)

    def subscribe(self, port: int) -> Subscriber:
        """A subscriber to every table's secure events on the broker at *port*, noting here."""
        import time

        from firmware_host.mqtt.subscriber import Subscriber
        return Subscriber(port, [self.TOPIC], client_id=f"bench-{time.monotonic_ns()}", on_message=self.note,
                          clock=time.perf_counter)


def _bench_config(directory: str | Path, port: int, table: str) -> Config:
    from firmware_host.service.config import parse_config
    return parse_config({"table": {"id": table, "profile": "000"},
                         "broker": {"host": "127.0.0.1", "port": port, "keepalive": 30},
                         "outbox": {"path": "outbox.sqlite", "max_bytes": 500_000_000},
                         "journal": {"path": "journal.sqlite"}, "publish": {"health_interval": 3600},
                         "commands": {"key": "bench-key-0123456789abcdef"}}, base=Path(directory))


def _single_table(port: int, directory: str, events: int, rate: float) -> dict[str, Any]:
    """Observations at *rate*/s (0: flat out) until *events* events; latency observation -> subscriber."""
    import os
    import time

    from firmware_host.service.service import Service, demo_source

    loops = events // 60 + 2
    os.makedirs(directory, exist_ok=True)
    arrivals = Arrivals()
    subscriber = arrivals.subscribe(port)
    service = Service(_bench_config(directory, port, "bench")).start()
    service.publisher.connected.wait(10)
    sent: dict[int, float] = {}
    start = time.perf_counter()
    n = 0
    for obs in demo_source(0, loops=loops):
        if rate:
            due = start + n / rate
            while (now := time.perf_counter()) < due:
                time.sleep(min(0.001, due - now))
        n += 1
        t_in = time.perf_counter()
        for event in service.handle(obs):
            sent[event.seq] = t_in
        if len(sent) >= events:
            break
    fed = time.perf_counter()
    first = arrivals.first
    ok = subscriber.wait_for(lambda _: len(first) >= len(sent), 120)
    done = max(first.values())
    latencies = [(first[("bench", seq)] - t) * 1000 for seq, t in sent.items() if ("bench", seq) in first]
    service.close()
    subscriber.close()
    return {"events": len(sent), "observations": n, "received": len(first), "lost": len(sent) - len(first),
            "complete": ok, "median_ms": round(statistics.median(latencies), 3),
            "p99_ms": round(percentile(latencies, 99), 3), "max_ms": round(max(latencies), 3),
            "feed_s": round(fed - start, 3), "total_s": round(done - start, 3),
            "events_per_s": round(len(sent) / (done - start), 1)}


TABLES_PER_PROCESS = 50
"""paho waits with select(): a socket numbered past 1024 fails, and a table holds ~9 descriptors
(journal and outbox files, WAL, socket), so the simulated tables are spread over processes."""


def _table_worker(port: int, directory: str, names: list[str], seconds: float, table_rate: float,
                  go: ProcessEvent, results: Queue[tuple[str, Any]]) -> None:
    """One process of simulated tables: wait for *go*, feed for *seconds*, drain, report."""
    import logging
    import time

    from firmware_host.service.service import Service, demo_source

    logging.basicConfig(level=logging.ERROR)
    services, sources = [], []
    for name in names:
        d = Path(directory) / name
        d.mkdir(parents=True, exist_ok=True)
        services.append(Service(_bench_config(d, port, name)).start())
        sources.append(demo_source(0, loops=10**6))
    connected = sum(s.publisher.connected.wait(30) for s in services)
    results.put(("ready", connected))
    go.wait()
    rate = len(services) * table_rate
    start = time.perf_counter()
    n = 0
    while (now := time.perf_counter()) - start < seconds:
        due = start + n / rate
        if now < due:
            time.sleep(min(0.002, due - now))
            continue
        services[n % len(services)].handle(next(sources[n % len(services)]))
        n += 1
    fed = time.perf_counter() - start
    drained = all(s.drain(60) for s in services)
    report = {"observations": n, "events": sum(s.engine.seq for s in services), "fed_s": fed,
              "unacked": sum(len(s.outbox) for s in services), "drained": drained}
    for s in services:
        s.close()
    results.put(("done", report))


def _many_tables(port: int, directory: str, tables: int, seconds: float, table_rate: float) -> dict[str, Any]:
    """*tables* controllers (spread over processes) publishing into one broker for *seconds*."""
    import multiprocessing
    import time

    ctx = multiprocessing.get_context("spawn")
    arrivals = Arrivals()
    subscriber = arrivals.subscribe(port)
    go, results = ctx.Event(), ctx.Queue()
    names = [f"t{k + 1}" for k in range(tables)]
    groups = [names[i:i + TABLES_PER_PROCESS] for i in range(0, tables, TABLES_PER_PROCESS)]
    procs = [ctx.Process(target=_table_worker, args=(port, str(directory), g, seconds, table_rate, go, results))
             for g in groups]
    for p in procs:
        p.start()
    connected = sum(results.get(timeout=120)[1] for _ in procs)
    start = time.perf_counter()
    go.set()
    reports = [results.get(timeout=seconds + 180)[1] for _ in procs]
    for p in procs:
        p.join(30)
    expected = sum(r["events"] for r in reports)
    first = arrivals.first
    ok = subscriber.wait_for(lambda _: len(first) >= expected, 60)
    done = max(first.values()) - start if first else seconds
    subscriber.close()
    n = sum(r["observations"] for r in reports)
    fed = max(r["fed_s"] for r in reports)
    return {"tables": tables, "processes": len(procs), "connected": connected, "seconds": round(fed, 2),
            "observations": n, "events": expected, "received": len(first), "lost": expected - len(first),
            "complete": ok, "unacked_at_end": sum(r["unacked"] for r in reports),
            "events_per_s": round(expected / done, 1), "observations_per_s": round(n / fed, 1)}


def bench_mqtt(args: argparse.Namespace) -> int:
    """``tablectl bench mqtt``: latency and throughput of one table, then many tables at once."""
    import logging
    import resource
    import tempfile

    from firmware_host.sim.broker import LocalMosquitto

    logging.basicConfig(level=logging.ERROR)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    events = max(args.events, 10_000)
    with tempfile.TemporaryDirectory(prefix="bench-mqtt-") as tmp, LocalMosquitto(tmp) as broker:
        print(f"Mosquitto on 127.0.0.1:{broker.port}; each observation journaled (SQLite WAL, fsync), fed to "
              "the engine, its events written to the outbox (fsync), published QoS 1, received by a subscriber")
        paced = _single_table(broker.port, f"{tmp}/paced", events, args.rate)
        print(f"latency, {paced['events']} events at {args.rate:g} observations/s: median {paced['median_ms']} ms,"
              f" p99 {paced['p99_ms']} ms, max {paced['max_ms']} ms; lost {paced['lost']}")
        flat = _single_table(broker.port, f"{tmp}/flat", events, 0)
        print(f"throughput, {flat['events']} events flat out: {flat['events_per_s']} events/s sustained "
              f"(fed in {flat['feed_s']} s, all received after {flat['total_s']} s); lost {flat['lost']}")
        many = _many_tables(broker.port, f"{tmp}/many", args.tables, args.seconds, args.table_rate)
        print(f"{many['tables']} tables ({many['connected']} connected, {many['processes']} processes) for "
              f"{many['seconds']} s at {args.table_rate:g} observations/s each: {many['events']} events, "
              f"{many['events_per_s']} events/s; lost {many['lost']}")
    result = {"bench": "mqtt", "latency": paced, "throughput": flat, "tables": many,
              "ok": paced["lost"] == 0 and flat["lost"] == 0 and many["lost"] == 0}
    print(json.dumps(result, sort_keys=True))
    return 0 if result["ok"] else 1
