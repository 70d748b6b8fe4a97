"""``tablectl hall ...``: the hall server's commands (archive, chain check, last hands, export, gaps)."""
from __future__ import annotations

import argparse
import datetime as dt
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from firmware_host.cli.common import Parsers

if TYPE_CHECKING:
    from hall.config import HallConfig
    from hall.dashboard.server import Dashboard
    from hall.store.sql import SqlStore


def register(parsers: Parsers) -> None:
    hall = parsers.commands.add_parser("hall", help="the hall server: every table's events archived, hand histories")
    actions = hall.add_subparsers(dest="hall_command", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="archive every table's events (until SIGTERM or Ctrl-C)")
    run.add_argument("--config", required=True, help="the hall's TOML config (hall/hall.example.toml)")
    run.set_defaults(func=cmd_run)
    user = actions.add_parser("user", help="the dashboard's accounts: add or replace one (argon2id hash)")
    user.add_argument("verb", choices=("add",))
    user.add_argument("name")
    user.add_argument("--role", required=True, choices=("td", "floor", "surveillance"))
    user.add_argument("--users", required=True, help="the users file ([dashboard] users_file)")
    user.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    user.set_defaults(func=cmd_user)
    verify = actions.add_parser("verify", help="check each table's hash chain; name the first broken link")
    hands = actions.add_parser("hands", help="the last hands of a table, every event (last-game recall)")
    hands.add_argument("--table", required=True)
    hands.add_argument("--last", type=int, default=1, help="how many hands (default: 1)")
    export = actions.add_parser("export", help="a table's finished hands as hand histories")
    export.add_argument("--table", required=True)
    export.add_argument("--from", dest="since", type=when, default=None, help="published from (ISO time or Unix s)")
    export.add_argument("--to", dest="until", type=when, default=None, help="published up to (ISO time or Unix s)")
    export.add_argument("--format", choices=("phh",), default="phh")
    export.add_argument("--out", default="-", help="file to write (default: standard output)")
    gaps = actions.add_parser("gaps", help="open alarms: messages missing from a table's streams")
    from hall.bench import register as register_bench
    register_bench(parsers.bench)
    for command, func in ((verify, cmd_verify), (hands, cmd_hands), (export, cmd_export), (gaps, cmd_gaps)):
        where = command.add_mutually_exclusive_group(required=True)
        where.add_argument("--config", help="the hall's TOML config (its [archive] store)")
        where.add_argument("--store", help="the store: sqlite:///PATH, a path, or postgresql://...")
        command.set_defaults(func=func)


def when(text: str) -> float:
    """``--from``/``--to``: Unix seconds or an ISO 8601 time (UTC when it names no zone).

    >>> when("1763900000"), when("2025-11-23T12:13:20")
    (1763900000.0, 1763900000.0)
    """
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither Unix seconds nor an ISO 8601 time") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp()


def _open(args: argparse.Namespace) -> SqlStore:
    """The store of ``--store`` or of ``--config``'s ``[archive]``."""
    from hall.config import load_hall_config
    from hall.store import open_store
    url = args.store if args.store else load_hall_config(args.config).archive.store
    return open_store(url)


def cmd_run(args: argparse.Namespace) -> int:
    from hall.archive import Archive
    from hall.config import load_hall_config
    from hall.store import open_store

    config = load_hall_config(args.config)
    dashboard = _dashboard(config)            # its accounts are read now: a bad users file stops nothing running
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open_store(config.archive.store) as store:
        archive = Archive(config, store, on_alarm=lambda text: print(f"ALARM {text}", flush=True))
        archive.start()
        print(f"archiving {', '.join(archive.filters())} from {config.broker.host}:{config.broker.port} "
              f"into {store.where}", flush=True)

        def report() -> None:
            c = archive.counters
            print(f"stored {c['stored']}, duplicates dropped {c['duplicates']}, kept apart {c['rejected']}, "
                  f"gap alarms {c['gap_alarms']}, store errors {c['store_errors']}", flush=True)
        try:
            if dashboard is None:
                while not stop.wait(10):
                    report()
            else:
                _serve_dashboard(dashboard, stop, report)
        except KeyboardInterrupt:
            pass
        finally:
            archive.close()
    print("stopped: everything received was stored and acknowledged", flush=True)
    return 0


def _dashboard(config: HallConfig) -> Dashboard | None:
    if config.dashboard is None:
        return None
    from hall.dashboard.server import Dashboard
    return Dashboard(config.dashboard, config.archive.store)


def _serve_dashboard(dashboard: Dashboard, stop: threading.Event, report: Callable[[], None]) -> None:
    """Serve the TD's dashboard on the main thread's event loop until *stop* (SIGTERM) or Ctrl-C."""
    import asyncio

    async def main() -> None:
        try:
            await dashboard.start()
        except OSError as exc:
            raise OSError(f"dashboard: cannot listen on {dashboard.config.listen}:{dashboard.config.port}: "
                          f"{exc.strerror or exc}") from None
        print(f"dashboard: {dashboard.url}/ (broker account {dashboard.config.broker.username})", flush=True)
        try:
            waited = 0.0
            while not stop.is_set():
                await asyncio.sleep(0.2)
                waited += 0.2
                if waited >= 10:
                    waited = 0.0
                    report()
                    print(dashboard.report(), flush=True)
        finally:
            await dashboard.close()
    asyncio.run(main())


def cmd_user(args: argparse.Namespace) -> int:
    import getpass

    from hall.dashboard.accounts import add_user

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            print("the two passwords differ", file=sys.stderr)
            return 2
    try:
        add_user(args.users, args.name, args.role, password)
    except ValueError as exc:
        print(f"tablectl hall user: {exc}", file=sys.stderr)
        return 2
    print(f"{args.name} ({args.role}) written to {args.users}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from hall.chain import first_break

    broken = 0
    with _open(args) as store:
        for table in store.tables():
            found = first_break(table, store.links(table))
            if found is None:
                print(f"table {table}: {store.count(table)} messages, the chain holds")
            else:
                broken += 1
                print(f"BROKEN {found}")
    return 1 if broken else 0


def cmd_hands(args: argparse.Namespace) -> int:
    from firmware_host.cli.display import describe
    from firmware_host.events import from_dict
    from hall.export import hands, sessions

    with _open(args) as store:
        found = hands(store, args.table)[-args.last:] if args.last > 0 else []
        births = sessions(store, args.table)
    if not found:
        print(f"table {args.table}: no finished hand in the store", file=sys.stderr)
        return 1
    for hand in found:
        house = births.get(hand.session, {}).get("profile", "?")
        print(f"== table {hand.table}, hand {hand.number} (session {hand.session}, house {house})"
              + ("  VOIDED" if hand.voided else ""))
        shown = {id(e) for e in hand.events}
        for e in [e for e in hand.irregular if id(e) not in shown] + hand.events:
            body = {k: v for k, v in e.items() if k != "session"}
            print("   " + describe(from_dict(body), show_secrets=True))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from hall.export import histories
    from hall.histories import dumps

    with _open(args) as store:
        records = histories(store, args.table, args.since, args.until)
    text = dumps(records) if records else ""
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text)
        print(f"{len(records)} hand(s) of table {args.table} written to {args.out}", file=sys.stderr)
    return 0


def cmd_gaps(args: argparse.Namespace) -> int:
    with _open(args) as store:
        alarms = [a for a in store.open_alarms() if a[0].startswith("gap ")]
        now = store.gaps()
    for _key, _table, text, raised in alarms:
        print(f"ALARM since {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(raised))} UTC: {text}")
    for gap in now:
        print(f"missing now: {gap}")
    if not alarms and not now:
        print("no message missing")
    return 1 if alarms else 0
