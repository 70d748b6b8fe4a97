"""``tablectl doctor``: check the config, keys, storage, clock, broker and devices; one line each."""
from __future__ import annotations

import argparse
from pathlib import Path

from firmware_host.cli.common import Parsers


def register(parsers: Parsers) -> None:
    command = parsers.commands.add_parser(
        "doctor", help="check config, keys, storage, clock, broker and devices: one line each, ok or the fix")
    command.add_argument("--config", required=True, help="the table's config (/etc/tablectl/table.toml)")
    command.add_argument("--devices", default=None, metavar="TABLE_PROFILE",
                         help="also check the devices of this table profile: readers, shoe, console, cameras")
    command.add_argument("--calibration", default=".", metavar="DIR",
                         help="where camera-NAME-table.json and camera-NAME-chips.json are")
    command.add_argument("--shoe", default=None, help="the shoe's port (default: the table profile's)")
    command.add_argument("--public-password-file", default=None, metavar="FILE",
                         help="the broker's `public` account password: proves it cannot read the secure tree")
    command.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for each answer")
    command.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from firmware_host.service.doctor import Doctor

    doctor = Doctor(Path(args.config), Path(args.devices) if args.devices else None, Path(args.calibration),
                    args.shoe, Path(args.public_password_file) if args.public_password_file else None,
                    args.timeout)
    failed = 0
    for check in doctor.run():
        print(check.line(), flush=True)
        failed += not check.ok
    if args.devices is None:
        print("     devices not checked: give --devices TABLE_PROFILE")
    print(f"{failed} check(s) failed" if failed else "every check passed")
    return 1 if failed else 0
