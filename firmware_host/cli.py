"""``tablectl``: the table controller's command line."""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from .profile import ProfileError, builtin_ids, builtin_profile, load_profile

REPO = Path(__file__).resolve().parents[1]
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
    """A corpus recording of three hands replayed through the drivers, the events as they come."""
    from .cli_hil import CORPUS, _speed
    from .display import describe
    from .events import HandEnded
    from .recording import load
    from .replay import Replay

    recording = load(CORPUS / "demo-session")
    print(f"replaying {recording.duration:.0f} s of a session at table {recording.table} "
          f"(house rules {recording.profile}), speed {args.speed}")
    with Replay(recording, profile=args.profile) as run:
        run.run(speed=_speed(args.speed),
                on_event=lambda event: print(describe(event, show_secrets=args.secrets), flush=True))
        ended = [e for e in run.events if isinstance(e, HandEnded)]
    if ended:
        last = ended[-1]
        print("results: " + "  ".join(f"seat {s}: {st}" for s, st in sorted(zip(last.seats, last.stacks))))
    return 0


def cmd_phh_verify(args) -> int:
    from .phh import load, verify

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


PLUGINS = ("firmware_host.cli_cards", "firmware_host.cli_publish", "firmware_host.cli_vision", "firmware_host.cli_hil")
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
    engine.set_defaults(func=lambda args: __import__("firmware_host.bench", fromlist=["x"]).bench_engine(args))

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
