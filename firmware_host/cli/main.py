"""``tablectl``: the table controller's command line."""
from __future__ import annotations

import argparse
import importlib
import time
import json
import sys
from pathlib import Path

from firmware_host.rules.profile import ProfileError, builtin_ids, builtin_profile, load_profile

REPO = Path(__file__).resolve().parents[2]
PLURIBUS = (REPO.parent / "shared/phh/pluribus.phhs", REPO / "tests/data/pluribus.phhs.gz")


def _profile(name: str):
    """A built-in profile id (000..004) or a TOML file."""
    return builtin_profile(name) if name in builtin_ids() else load_profile(name)


def _pluribus() -> str:
    for path in PLURIBUS:
        if path.exists():
            return str(path)
    raise SystemExit("no Pluribus hands found; pass the PHH file")


def cmd_demo(args) -> int:
    """A recorded session replayed through the drivers into the controller, published to a real
    Mosquitto on loopback; the events printed as a subscriber receives them."""
    import tempfile

    from firmware_host import events as ev
    from firmware_host.sim.broker import BrokerMissing, LocalMosquitto
    from firmware_host.cli.hil import CORPUS, _speed
    from firmware_host.hil.recording import load

    recording = load(CORPUS / "demo-session")
    _speed(args.speed)          # a bad --speed is refused before the broker starts
    with tempfile.TemporaryDirectory(prefix="tablectl-demo-") as tmp:
        try:
            broker = LocalMosquitto(tmp)
        except BrokerMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            received = _demo_run(broker, recording, args, tmp)
        finally:
            broker.close()
    ended = [e for e in received if isinstance(e, ev.HandEnded)]
    if ended:
        last = ended[-1]
        print("results: " + "  ".join(f"seat {s}: {st}" for s, st in sorted(zip(last.seats, last.stacks))))
    return 0


def _demo_run(broker, recording, args, tmp) -> list:
    """The demo's session against *broker*: the service publishes, a viewer prints what it receives."""
    import threading

    import paho.mqtt.client as mqtt

    from firmware_host import events as ev
    from firmware_host.cli.hil import _speed
    from firmware_host.cli.display import describe
    from firmware_host.mqtt.contract import Topics
    from firmware_host.hil.replay import Replay
    from firmware_host.service.service import Service, local_config

    speed = _speed(args.speed)
    print(f"Mosquitto on 127.0.0.1:{broker.port}; replaying {recording.duration:.0f} s of a session at table "
          f"{recording.table} (house rules {args.profile or recording.profile}) at speed {args.speed}", flush=True)
    topics = Topics(recording.table)
    topic = topics.secure_event if args.secrets else topics.event
    received: list[ev.Event] = []
    ready, lock = threading.Event(), threading.Lock()

    def on_message(client, userdata, message):
        body = json.loads(message.payload)["event"]
        try:
            event = ev.from_dict(body)
        except (KeyError, TypeError, ValueError):
            print(f"   {body.get('kind')}: {json.dumps(body, ensure_ascii=False)}", flush=True)
            return
        with lock:
            if any(e.seq == event.seq for e in received):     # QoS 1: at least once
                return
            received.append(event)
        print(describe(event, show_secrets=args.secrets), flush=True)

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="tablectl-demo-viewer")
    client.on_message = on_message
    client.on_subscribe = lambda *a: ready.set()
    client.connect("127.0.0.1", broker.port)
    client.subscribe(topic, qos=1)
    client.loop_start()
    ready.wait(5)
    config = local_config(recording.table, args.profile or recording.profile, "127.0.0.1", broker.port, tmp)
    service = Service(config)
    try:
        service.start()
        replay = Replay(recording)
        service.feed_from(replay.stream(speed))
        service.run(until_source_ends=True)
        published = service.engine.seq
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with lock:
                if sum(1 for _ in received) >= (published if args.secrets else 1) and _ended(received, service):
                    break
            time.sleep(0.1)
    finally:
        service.close()
        replay.close()
        client.loop_stop()
        client.disconnect()
    return received


def _ended(received, service) -> bool:
    """Has the viewer received the last hand's end?"""
    from firmware_host.events import HandEnded
    return sum(isinstance(e, HandEnded) for e in received) >= service.engine.hand_number


def cmd_phh_verify(args) -> int:
    from firmware_host.hil.phh import load, verify

    profile = _profile(args.profile)
    total = agree = odd = 0
    for path in args.files or [_pluribus()]:
        hands = load(path)[: args.limit] if args.limit else load(path)
        for verdict in verify(enumerate(hands, 1), profile):
            total += 1
            agree += verdict.agree
            odd += verdict.odd_chip and verdict.agree
            if not verdict.agree:
                print(f"{path} hand {verdict.number}: DISAGREES: {verdict.detail}")
            elif verdict.odd_chip and not args.quiet:
                print(f"{path} hand {verdict.number}: agrees within one chip: {verdict.detail} (000 §20)")
    if odd:
        print(f"{odd} hand(s) split a pot with an odd chip: the record halves it; the table cannot, "
              f"so they agree when the odd chip went where profile {profile.id} says and every stack "
              "is within one chip of the record")
    print(f"agree: {agree}/{total}")
    return 0 if agree == total else 1


def cmd_profile(args) -> int:
    try:
        profile = _profile(args.profile)
    except ProfileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(profile_summary(profile), indent=2, ensure_ascii=False))
    return 0


def profile_summary(profile) -> dict:
    import dataclasses
    return json.loads(json.dumps(dataclasses.asdict(profile), default=str))


PLUGINS = ("firmware_host.cli.cards", "firmware_host.cli.run", "firmware_host.cli.vision", "firmware_host.cli.hil")
"""Modules that add their own sub-commands: each has ``register(commands, bench, calibrate)``."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablectl", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="replay a recorded session (three hands, two irregularities) and show the events")
    demo.add_argument("--profile", default=None, help="override the house-rules profile: 000..004")
    demo.add_argument("--speed", default="1", help="1 = real time (default), N times, or 'max'")
    demo.add_argument("--secrets", action="store_true", help="show hole and burn cards (surveillance view)")
    demo.set_defaults(func=cmd_demo)

    phh = sub.add_parser("phh", help="real hands in PHH format")
    phh_sub = phh.add_subparsers(dest="phh_command", required=True, metavar="ACTION")
    verify = phh_sub.add_parser("verify", help="replay PHH hands through the engine; compare with the record")
    verify.add_argument("files", nargs="*", help=".phh or .phhs files (default: the Pluribus hands)")
    verify.add_argument("--profile", default="000")
    verify.add_argument("--limit", type=int, default=0, help="only the first N hands of each file")
    verify.add_argument("--quiet", action="store_true", help="print disagreements only")
    verify.set_defaults(func=cmd_phh_verify)

    profile = sub.add_parser("profile", help="load and validate a house-rules profile, print it")
    profile.add_argument("profile", help="000..004 or a TOML file")
    profile.set_defaults(func=cmd_profile)

    bench = sub.add_parser("bench", help="measurements: readable figures, then one JSON line")
    bench_sub = bench.add_subparsers(dest="bench_name", required=True, metavar="NAME")
    engine = bench_sub.add_parser("engine", help="Pluribus hands through the engine vs pokerkit alone")
    engine.add_argument("--file", default=None, help="PHH file (default: the 10,000 Pluribus hands)")
    engine.add_argument("--limit", type=int, default=0)
    engine.add_argument("--profile", default="000")
    engine.set_defaults(func=lambda args: __import__("firmware_host.cli.bench", fromlist=["x"]).bench_engine(args))

    calibrate = sub.add_parser("calibrate", help="calibrate the table: deck, camera geometry, chip colours")
    calibrate_sub = calibrate.add_subparsers(dest="calibrate_name", required=True, metavar="WHAT")
    for name in PLUGINS:
        importlib.import_module(name).register(sub, bench_sub, calibrate_sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
