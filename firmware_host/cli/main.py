"""``tablectl``: the table controller's command line."""
from __future__ import annotations

import argparse
import logging
import sys
from importlib.metadata import PackageNotFoundError, version

from firmware_host.cli import cards, demo, doctor, hil, phh, profile, run, vision, watch, wiring
from firmware_host.cli.common import Parsers
from firmware_host.configfile import ConfigError
from firmware_host.hil.phh import PhhError
from firmware_host.hil.recording import RecordingError
from hall import cli as hall
from hall.store.sql import StoreError

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")

GROUPS = (demo, run, doctor, watch, hil, phh, profile, cards, vision, wiring, hall)
"""The command groups, in the order of ``tablectl --help``: each adds its sub-commands with ``register(parsers)``."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablectl", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = commands.add_parser("bench", help="measurements: readable figures, then one JSON line")
    calibrate = commands.add_parser("calibrate", help="calibrate the table: deck, camera geometry, chip colours")
    parsers = Parsers(commands, bench=bench.add_subparsers(dest="bench_name", required=True, metavar="NAME"),
                      calibrate=calibrate.add_subparsers(dest="calibrate_name", required=True, metavar="WHAT"))
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    for group in GROUPS:
        group.register(parsers)
    for command in _leaves(commands):
        command.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, default="WARNING",
                             help="what to log on stderr: %(choices)s (default: %(default)s)")
    return parser


def _version() -> str:
    try:
        return version("pokertable")
    except PackageNotFoundError:      # run from a checkout that was never installed
        return "unknown (not installed)"


def _leaves(action: argparse._SubParsersAction[argparse.ArgumentParser]) -> list[argparse.ArgumentParser]:
    """Every command that runs (``bench mqtt``, ``run``...), not the groups that only hold commands."""
    out = []
    for sub in dict.fromkeys(action.choices.values()):
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        out += _leaves(nested[0]) if nested else [sub]
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one command. A config file, profile, recording, hand file or path that cannot be used is one
    line and exit 2; Ctrl-C is exit 130, without a traceback."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        code: int = args.func(args)
    except (ConfigError, PhhError, RecordingError, StoreError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
