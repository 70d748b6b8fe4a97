"""``tablectl``: the table controller's command line."""
from __future__ import annotations

import argparse
import sys

from firmware_host.cli import cards, demo, hil, phh, profile, run, vision
from firmware_host.cli.common import Parsers
from firmware_host.configfile import ConfigError
from firmware_host.hil.phh import PhhError

GROUPS = (demo, run, hil, phh, profile, cards, vision)
"""The command groups, in the order of ``tablectl --help``: each adds its sub-commands with ``register(parsers)``."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tablectl", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = commands.add_parser("bench", help="measurements: readable figures, then one JSON line")
    calibrate = commands.add_parser("calibrate", help="calibrate the table: deck, camera geometry, chip colours")
    parsers = Parsers(commands, bench=bench.add_subparsers(dest="bench_name", required=True, metavar="NAME"),
                      calibrate=calibrate.add_subparsers(dest="calibrate_name", required=True, metavar="WHAT"))
    for group in GROUPS:
        group.register(parsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. A config file, profile or hand file that cannot be used is one line and exit 2;
    Ctrl-C is exit 130, without a traceback."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except (ConfigError, PhhError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
