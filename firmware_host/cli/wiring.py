"""``tablectl wiring``: the table's wiring drawn from its table profile (table, picture, overlay, udev rule)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware_host.cli.common import Parsers


def register(parsers: Parsers) -> None:
    command = parsers.commands.add_parser(
        "wiring", help="the wiring of a table profile: Markdown table, SVG picture, SPI overlay, udev rule")
    command.add_argument("table", help="the table profile (hardware/tables/*.toml)")
    command.add_argument("--out", required=True, metavar="DIR", help="write NAME.md, NAME.svg, NAME-spi0-cs.dts "
                                                                     "and NAME-shoe.rules here")
    command.add_argument("--check", action="store_true",
                         help="write nothing: exit 1 if a file in DIR differs from what the profile gives")
    command.set_defaults(func=cmd_wiring)


def outputs(table: Path) -> dict[str, str]:
    """File name -> contents, everything the table profile at *table* draws."""
    from calibration.wiring import load_wiring, markdown, overlay, svg, udev_rule

    wiring = load_wiring(table)   # a ConfigError is main's one line and exit 2
    name = wiring.name
    return {f"{name}.md": markdown(wiring, table.as_posix()), f"{name}.svg": svg(wiring),
            f"{name}-spi0-cs.dts": overlay(wiring), f"{name}-shoe.rules": udev_rule(wiring)}


def cmd_wiring(args: argparse.Namespace) -> int:
    out = Path(args.out)
    stale = []
    for name, text in outputs(Path(args.table)).items():
        path = out / name
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path))
            continue
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(path)
    for name in stale:
        print(f"{name}: differs from {args.table}: regenerate with tablectl wiring {args.table} --out {out}",
              file=sys.stderr)
    return 1 if stale else 0
