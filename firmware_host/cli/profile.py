"""``tablectl profile``: load and validate a house-rules profile, print it."""
from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from firmware_host.cli.common import Parsers, profile
from firmware_host.rules.profile import Profile


def register(parsers: Parsers) -> None:
    command = parsers.commands.add_parser("profile", help="load and validate a house-rules profile, print it")
    command.add_argument("profile", help="000..004 or a TOML file")
    command.set_defaults(func=cmd_profile)


def cmd_profile(args: argparse.Namespace) -> int:
    house = profile(args.profile)  # a ConfigError is main's one line and exit 2
    print(json.dumps(summary(house), indent=2, ensure_ascii=False))
    return 0


def summary(house: Profile) -> dict[str, Any]:
    """The profile as plain JSON values."""
    values: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(house), default=str))
    return values
