"""tablectl sub-commands for hardware in the loop: `simulate`, `replay`, `record`, `bench replay`."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "recordings"


def register(commands, bench, calibrate) -> None:
    """Add this module's sub-commands to the ``tablectl`` parsers."""
    sim = commands.add_parser("simulate", help="write a recording from a table script (docs/scenarios.md)")
    sim.add_argument("script", help="the script file")
    sim.add_argument("out", help="the recording directory to write")
    sim.add_argument("--table", default="demo-1")
    sim.set_defaults(func=cmd_simulate)

    rep = commands.add_parser("replay", help="replay a recording through the drivers into the engine")
    rep.add_argument("recording", help="a recording directory (docs/recording.md)")
    rep.add_argument("--speed", default="max", help="'max' (as fast as possible), 1 (real time) or N times")
    rep.add_argument("--events-out", help="write the events as JSON lines (the MQTT payloads)")
    rep.add_argument("--profile", help="override the recording's house profile")
    rep.add_argument("--quiet", action="store_true", help="no event lines, only the summary")
    rep.add_argument("--secrets", action="store_true", help="show hole and burn cards")
    rep.set_defaults(func=cmd_replay)

    rec = commands.add_parser("record", help="record the raw streams of the table's devices (on the Pi)")
    rec.add_argument("out", help="the recording directory to write")
    rec.add_argument("--seconds", type=float, default=0, help="stop after N seconds (default: Ctrl-C)")
    rec.set_defaults(func=cmd_record)

    b = bench.add_parser("replay", help="replay speed over the whole scenario corpus, as fast as possible")
    b.add_argument("--corpus", default=str(CORPUS))
    b.set_defaults(func=cmd_bench_replay)


def _speed(text: str) -> float | None:
    if text == "max":
        return None
    speed = float(text)
    if speed <= 0:
        raise SystemExit(f"--speed: must be 'max' or a positive number, not {text!r}")
    return speed


def cmd_simulate(args) -> int:
    from .simulate import ScriptError, simulate
    try:
        recording = simulate(Path(args.script).read_text(), table=args.table)
    except (OSError, ScriptError) as exc:
        print(f"error: {args.script}: {exc}", file=sys.stderr)
        return 2
    path = recording.save(args.out)
    print(f"{path}: {len(recording.lines)} lines, {recording.duration:.1f} s")
    return 0


def cmd_replay(args) -> int:
    from .display import describe
    from .events import HandEnded, Irregularity
    from .recording import RecordingError, load
    from .replay import Replay
    try:
        recording = load(args.recording)
    except RecordingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = open(args.events_out, "w") if args.events_out else None
    lines = recording.lines
    shown = [0]

    def on_event(event):
        if out:
            out.write(event.to_json() + "\n")
        if not args.quiet:
            print(describe(event, show_secrets=args.secrets), flush=True)

    started = time.monotonic()
    with Replay(recording, profile=args.profile) as run:
        run.run(speed=_speed(args.speed), on_event=on_event)
        events = run.events
    if out:
        out.close()
    hands = sum(isinstance(e, HandEnded) for e in events)
    alerts = sum(isinstance(e, Irregularity) for e in events)
    del shown, lines
    print(f"replayed {recording.duration:.1f} s of table time in {time.monotonic() - started:.2f} s: "
          f"{len(events)} events, {hands} hands, {alerts} irregularities")
    return 0


def cmd_record(args) -> int:
    print("error: tablectl record needs the table's devices (shoe on /dev/ttyACM0, zone readers on SPI, "
          "console on GPIO); none found on this machine. Recordings for tests come from "
          "`tablectl simulate` (docs/scenarios.md).", file=sys.stderr)
    return 2


def cmd_bench_replay(args) -> int:
    from .events import HandEnded
    from .recording import load
    from .replay import Replay
    recordings = sorted(p.parent for p in Path(args.corpus).glob("*/recording.json"))
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
