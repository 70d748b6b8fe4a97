"""Hardware in the loop: ``tablectl simulate``, ``replay``, ``record`` and ``bench replay``."""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from firmware_host.cli.common import SPEED_HELP, Parsers, corpus, open_cameras, progress, speed

if TYPE_CHECKING:
    from firmware_host.events import Event
    from firmware_host.hil.recording import Recording


def register(parsers: Parsers) -> None:
    commands = parsers.commands
    sim = commands.add_parser("simulate", help="write a recording from a table script (docs/scenarios.md)")
    sim.add_argument("script", help="the script file")
    sim.add_argument("out", help="the recording directory to write")
    sim.add_argument("--table", default="demo-1")
    sim.set_defaults(func=cmd_simulate)

    rep = commands.add_parser("replay", help="replay a recording through the drivers into the engine")
    rep.add_argument("recording", help="a recording directory (docs/recording.md)")
    rep.add_argument("--speed", type=speed, default=None, help=f"{SPEED_HELP} (default: max)")
    rep.add_argument("--events-out", help="write the events as JSON lines (the MQTT payloads)")
    rep.add_argument("--broker", help="publish for real through the controller service: mqtt://HOST[:PORT]")
    rep.add_argument("--broker-wait", type=float, default=10.0, metavar="SECONDS",
                     help="with --broker: give up (exit 2) if the broker cannot be reached within this (default 10)")
    rep.add_argument("--profile", help="override the recording's house profile")
    rep.add_argument("--quiet", action="store_true", help="no event lines, only the summary")
    rep.add_argument("--secrets", action="store_true", help="show hole and burn cards")
    rep.add_argument("--progress", action="store_true",
                     help="a progress bar (shown anyway on a terminal for long replays)")
    rep.set_defaults(func=cmd_replay)

    rec = commands.add_parser("record", help="record the raw streams of the table's devices (on the Pi)")
    rec.add_argument("out", help="the recording directory to write")
    rec.add_argument("--seconds", type=float, default=0, help="stop after N seconds (default: Ctrl-C)")
    rec.add_argument("--table-profile", default=None,
                     help="hardware/tables/*.toml (default: the shipped demo-10, firmware_host/data/tables)")
    rec.add_argument("--decks", required=True, help="the deck registry directory (tablectl calibrate deck)")
    rec.add_argument("--in-play", default=None, help="the deck in play (default: the first)")
    rec.add_argument("--shoe", default="/dev/ttyACM0", help="the shoe's serial port (or a pyserial URL)")
    rec.add_argument("--profile", default="000", help="the house-rules profile")
    rec.add_argument("--table", default="table-1", help="the table id")
    rec.add_argument("--camera", action="append", default=[], metavar="NAME=INDEX",
                     help="a chip camera (V4L2 device INDEX) calibrated as NAME, filmed too; repeat per camera")
    rec.add_argument("--calibration", default=".", metavar="DIR",
                     help="with --camera: where camera-NAME-table.json and camera-NAME-chips.json are")
    rec.set_defaults(func=cmd_record)

    b = parsers.bench.add_parser("replay", help="replay speed over the whole scenario corpus, as fast as possible")
    b.add_argument("--corpus", default=None, help="a folder of recordings (default: tests/recordings)")
    b.set_defaults(func=cmd_bench_replay)


def cmd_simulate(args: argparse.Namespace) -> int:
    from firmware_host.sim.simulate import ScriptError, simulate
    try:
        recording = simulate(Path(args.script).read_text(), table=args.table)
    except (OSError, ScriptError) as exc:
        print(f"error: {args.script}: {exc}", file=sys.stderr)
        return 2
    path = recording.save(args.out)
    print(f"{path}: {len(recording.lines)} lines, {recording.duration:.1f} s")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from firmware_host.cli.display import describe
    from firmware_host.events import HandEnded, Irregularity
    from firmware_host.hil.recording import RecordingError, load
    from firmware_host.hil.replay import Replay
    try:
        recording = load(args.recording)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = open(args.events_out, "w") if args.events_out else None

    def on_event(event: Event) -> None:
        if out:
            out.write(event.to_json() + "\n")
        if not args.quiet:
            print(describe(event, show_secrets=args.secrets), flush=True)

    started = time.monotonic()

    if args.broker:
        return _replay_to_broker(recording, args, on_event)
    with Replay(recording, profile=args.profile) as run, \
            progress(len(recording.lines), "lines", force=args.progress) as bar:

        def advance(done: int, total: int) -> None:
            bar.update(done - bar.n)

        run.run(speed=args.speed, on_event=on_event, on_progress=advance)
        events = run.events
    if out:
        out.close()
    hands = sum(isinstance(e, HandEnded) for e in events)
    alerts = sum(isinstance(e, Irregularity) for e in events)
    print(f"replayed {recording.duration:.1f} s of table time in {time.monotonic() - started:.2f} s: "
          f"{len(events)} events, {hands} hands, {alerts} irregularities")
    return 0


def _replay_to_broker(recording: Recording, args: argparse.Namespace, on_event: Callable[[Event], None]) -> int:
    """The recording as the source of the real service: journal, engine, outbox, MQTT to *args.broker*."""
    import tempfile
    from urllib.parse import urlparse

    from firmware_host.hil.replay import Replay
    from firmware_host.service.config import local_config
    from firmware_host.service.service import Service

    url = urlparse(args.broker)
    if url.scheme not in ("mqtt", "tcp") or not url.hostname:
        print(f"error: --broker: expected mqtt://HOST[:PORT], not {args.broker!r}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tablectl-replay-") as tmp:
        config = local_config(recording.table, args.profile or recording.profile, url.hostname, url.port or 1883, tmp)
        service = Service(config, on_event=on_event, source="recording", chip_unit=recording.chip_unit)
        with Replay(recording, profile=args.profile) as replay:
            try:
                service.start()
                if not service.publisher.connected.wait(args.broker_wait):
                    print(f"error: --broker: no broker reachable at {args.broker} within {args.broker_wait:g} s "
                          f"({service.publisher.last_error or 'no answer'}); nothing replayed", file=sys.stderr)
                    return 2
                service.feed_from(replay.stream(args.speed))
                service.run(until_source_ends=True)
                left = len(service.outbox)
            finally:
                service.close()
    print(f"published {service.engine.seq} events to {args.broker}" + (f"; {left} not acknowledged" if left else ""))
    return 1 if left else 0


def cmd_record(args: argparse.Namespace) -> int:
    """Record from the real devices: the shoe on serial, the MFRC522s on SPI, the console on GPIO."""
    import signal
    import tomllib

    from calibration.deck import DeckError, Registry
    from calibration.readers import parse_readers
    from drivers.console import load_console_pins
    from drivers.zones import open_real
    from firmware_host import data
    from firmware_host.service.devices import record_session
    from firmware_host.service.recorder import Recorder
    where = args.table_profile or data.DEMO_TABLE
    try:
        text = Path(args.table_profile).read_text() if args.table_profile else data.read_text(data.DEMO_TABLE)
        table = tomllib.loads(text)
        readers = parse_readers(table, where)
        pins = load_console_pins(table, where)
        registry = Registry.from_directory(args.decks, in_play=args.in_play)
        if not registry.decks:
            raise ValueError(f"{args.decks}: no registered deck (tablectl calibrate deck)")
    except (OSError, ValueError, DeckError, tomllib.TOMLDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    decks = [{"deck": d.deck, "back": d.back, "cards": dict(d.cards)} for d in registry.decks.values()]
    assert registry.in_play is not None       # a registry with decks has one in play
    recorder = Recorder(args.table, args.profile, text, decks, registry.in_play)
    try:
        cameras = open_cameras(args.camera, Path(args.calibration), clock=recorder.now)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        chips = open_real(readers)
    except Exception as exc:       # no SPI on this machine, or a reader not answering
        for feed in cameras:
            feed.close()
        print(f"error: the zone readers cannot be opened: {exc}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.seconds if args.seconds else None
    interrupted = []
    signal.signal(signal.SIGINT, lambda *_: interrupted.append(True))
    record_session(recorder, shoe_port=args.shoe, registry=registry, readers=readers, chips=chips,
                   console_pins=pins, cameras=cameras,
                   stop=lambda: bool(interrupted) or (deadline is not None and time.monotonic() > deadline))
    recording = recorder.recording()
    path = recording.save(args.out)
    recorder.discard()
    print(f"{path}: {len(recording.lines)} lines, {recording.duration:.1f} s")
    return 0


def cmd_bench_replay(args: argparse.Namespace) -> int:
    from firmware_host.events import HandEnded
    from firmware_host.hil.recording import load
    from firmware_host.hil.replay import Replay
    recordings = sorted(p.parent for p in corpus(args.corpus, "tests/recordings", "--corpus").glob("*/recording.json"))
    table_s = wall = 0.0
    hands = events = 0
    for path in recordings:
        recording = load(path)
        start = time.perf_counter()
        with Replay(recording) as run:
            out = run.run()
        wall += time.perf_counter() - start
        table_s += recording.duration
        hands += sum(isinstance(e, HandEnded) for e in out)
        events += len(out)
    figures = {"bench": "replay", "recordings": len(recordings), "hands": hands, "events": events,
               "table_seconds": round(table_s, 1), "wall_seconds": round(wall, 2),
               "recorded_seconds_per_wall_second": round(table_s / wall, 1) if wall else 0,
               "hands_per_second": round(hands / wall, 1) if wall else 0}
    print(f"recordings:            {len(recordings)} ({hands} hands, {events} events)")
    print(f"table time replayed:   {figures['table_seconds']} s in {figures['wall_seconds']} s")
    print(f"replay speed:          {figures['recorded_seconds_per_wall_second']} recorded s per wall s")
    print(f"hands per second:      {figures['hands_per_second']}")
    print(json.dumps(figures))
    return 0
