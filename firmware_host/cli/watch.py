"""``tablectl watch TABLE``: one table live in the terminal, from the broker's public tree."""
from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from firmware_host.cli.common import Parsers

CLEAR = "\x1b[H\x1b[2J"


def register(parsers: Parsers) -> None:
    command = parsers.commands.add_parser(
        "watch", help="one table live from the broker: seats, stacks, board, pot, events, irregularities, health")
    command.add_argument("table", help="the table id (its topic tree: pokerhall/v1/table/TABLE/...)")
    command.add_argument("--host", default="127.0.0.1")
    command.add_argument("--port", type=int, default=1883)
    command.add_argument("--username", default=None, help="an account that reads the public tree (public, td)")
    command.add_argument("--password-file", default=None, metavar="FILE")
    command.add_argument("--ca-file", default=None, metavar="FILE", help="connect over TLS, trusting this CA")
    command.add_argument("--once", action="store_true",
                         help="print the view once the table's state has arrived (retained), then exit")
    command.add_argument("--count", type=int, default=None, metavar="N",
                         help="exit after N messages, printing the view")
    command.add_argument("--timeout", type=float, default=10.0,
                         help="with --once or --count: seconds to wait before giving up (exit 1)")
    command.add_argument("--events", type=int, default=8, help="how many of the last events to show")
    command.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    from firmware_host.mqtt.contract import check_id
    from firmware_host.mqtt.subscriber import Message, Subscriber
    from firmware_host.mqtt.watch import TableView, topics

    try:
        check_id(args.table, "table")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    password = Path(args.password_file).read_text().strip() if args.password_file else None
    view = TableView(args.table, keep=args.events)
    changed = threading.Condition()

    def on_message(message: Message) -> None:
        with changed:
            view.feed(message.topic, message.payload)
            changed.notify_all()

    live = args.count is None and not args.once
    try:
        subscriber = Subscriber(args.port, topics(args.table), host=args.host, username=args.username,
                                password=password, ca_file=Path(args.ca_file) if args.ca_file else None,
                                on_message=on_message, timeout=args.timeout)
    except (TimeoutError, OSError) as exc:
        print(f"error: {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    try:
        if not live:
            def done() -> bool:
                if args.count is not None:
                    return view.received >= args.count
                return "state" in view.latest
            with changed:
                ok = changed.wait_for(done, args.timeout)
                print(view.render(), end="", flush=True)
            if not ok:
                what = f"{args.count} message(s)" if args.count is not None else "no state"
                print(f"error: {what} from table {args.table} on {args.host}:{args.port} within {args.timeout:g} s: "
                      "is it running, and may this account read its topics?", file=sys.stderr)
                return 1
            return 0
        tty = sys.stdout.isatty()
        seen = -1

        def moved_on(last: int) -> Callable[[], bool]:
            return lambda: view.received != last

        while True:                       # Ctrl-C ends it (main: exit 130)
            with changed:
                changed.wait_for(moved_on(seen), 1.0)
                fresh, seen = view.received != seen, view.received
                screen = view.render()
            if tty:                       # redrawn in place, the ages ticking
                print(CLEAR + screen, end="", flush=True)
            elif fresh:                   # a pipe or a log: a new view when something changed
                print(screen, flush=True)
            time.sleep(0.2)               # at most five redraws a second
    finally:
        subscriber.close()
