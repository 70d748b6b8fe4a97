"""``tablectl demo``: the shipped recorded session replayed through the drivers into the controller,
published to a real Mosquitto on loopback; the events printed as a subscriber receives them; the hall's
archive listening too, its hand histories written at the end (tables -> broker -> archive)."""
from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from firmware_host import events as ev
from firmware_host.cli.common import SPEED_HELP, Parsers, speed
from firmware_host.cli.display import describe
from firmware_host.mqtt.subscriber import Message

if TYPE_CHECKING:
    from firmware_host.hil.recording import Recording
    from hall.archive import Archive


def register(parsers: Parsers) -> None:
    demo = parsers.commands.add_parser(
        "demo", help="replay a recorded session (three hands, two irregularities) and show the events")
    demo.add_argument("--profile", default=None, help="override the house-rules profile: 000..004")
    demo.add_argument("--speed", type=speed, default=1.0, help=f"{SPEED_HELP} (default: 1)")
    demo.add_argument("--secrets", action="store_true", help="show hole and burn cards (surveillance view)")
    demo.add_argument("--hall-dir", default="tablectl-demo",
                      help="where the hall's archive and hand histories go (default: ./tablectl-demo, made anew)")
    demo.set_defaults(func=cmd_demo)


class Viewer:
    """The demo's screen: each event printed once, as it arrives (QoS 1 delivers at least once)."""

    def __init__(self, show_secrets: bool) -> None:
        self.show_secrets = show_secrets
        self.events: list[ev.Event] = []
        self.made = 0      # events the table made (the archive waits for them all)

    def show(self, message: Message) -> None:
        body = message.payload["event"]
        try:
            event = ev.from_dict(body)
        except (KeyError, TypeError, ValueError):
            print(f"   {body.get('kind')}: {json.dumps(body, ensure_ascii=False)}", flush=True)
            return
        if any(seen.seq == event.seq for seen in self.events):
            return
        self.events.append(event)
        print(describe(event, show_secrets=self.show_secrets), flush=True)

    def has_seen(self, events: int, hands: int) -> bool:
        """At least *events* events, and the end of *hands* hands."""
        return len(self.events) >= events and sum(isinstance(e, ev.HandEnded) for e in self.events) >= hands


def cmd_demo(args: argparse.Namespace) -> int:
    from firmware_host import data
    from firmware_host.hil.recording import load
    from firmware_host.sim.broker import BrokerError, LocalMosquitto

    factor = args.speed
    signal.signal(signal.SIGTERM, _terminated)      # unwind: the broker stopped, its directory removed
    with data.path(data.DEMO_SESSION) as session, tempfile.TemporaryDirectory(prefix="tablectl-demo-") as tmp:
        recording = load(session)
        broker = LocalMosquitto(tmp)
        try:
            broker.start()
        except BrokerError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        try:
            print(f"Mosquitto on 127.0.0.1:{broker.port}; replaying {recording.duration:.0f} s of a session at "
                  f"table {recording.table} (house rules {args.profile or recording.profile}) at speed "
                  f"{'max' if factor is None else f'{factor:g}'}", flush=True)
            with _archive(broker.port, Path(args.hall_dir)) as archive:
                viewer = _session(broker.port, recording, args, factor, tmp)
                histories = _histories(archive, recording.table, viewer)
        finally:
            broker.stop()
    ended = [e for e in viewer.events if isinstance(e, ev.HandEnded)]
    if ended:
        last = ended[-1]
        print("results: " + "  ".join(f"seat {s}: {st}" for s, st in sorted(zip(last.seats, last.stacks))))
    print(histories, flush=True)
    return 0


def _archive(port: int, directory: Path) -> Archive:
    """The hall's archive worker on the demo's broker, into a fresh SQLite file in *directory*."""
    from firmware_host.mqtt.publisher import BrokerConfig
    from hall.archive import Archive
    from hall.config import ArchiveConfig, HallConfig
    from hall.store import open_store

    directory.mkdir(parents=True, exist_ok=True)
    for old in ("archive.sqlite", "archive.sqlite-wal", "archive.sqlite-shm", "hands.phhs"):
        (directory / old).unlink(missing_ok=True)
    config = HallConfig(BrokerConfig("127.0.0.1", port, client_id="tablectl-demo-archive"),
                        ArchiveConfig(store=str(directory / "archive.sqlite"), validate=False))  # our own table
    archive = Archive(config, open_store(config.archive.store), owns_store=True)
    archive.start()
    if not archive.connected.wait(10):
        archive.close()
        raise OSError(f"the hall's archive could not connect to the broker on 127.0.0.1:{port}")
    return archive


def _histories(archive: Archive, table: str, viewer: Viewer) -> str:
    """Once the archive holds every event the table made: its hand histories written, and where, and one."""
    from hall.export import histories
    from hall.histories import dumps

    store = archive.store
    end = time.monotonic() + 20
    while time.monotonic() < end and len(store.events(table)) < viewer.made:
        time.sleep(0.1)
    records = histories(store, table)
    path = Path(store.where).parent / "hands.phhs"
    path.write_text(dumps(records))
    if not records:
        return f"hall: archive {store.where}: {len(store.events(table))} events, no finished hand"
    from pokerkit import HandHistory
    shown = HandHistory.dumps_all(records[-1:]).split("\n", 1)[1]
    return (f"hall: archive {store.where} ({store.count()} messages, chain checked by `tablectl hall verify "
            f"--store {store.where}`)\nhall: {len(records)} hand histories (PHH) in {path.resolve()}; "
            f"the last one:\n{shown}")


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM: leave through the ``finally`` blocks (Mosquitto stopped, temp directory removed), exit 143."""
    print("terminated", file=sys.stderr)
    raise SystemExit(128 + signum)


def _session(port: int, recording: Recording, args: argparse.Namespace, factor: float | None, tmp: str) -> Viewer:
    """The controller service publishing the replayed *recording* to the broker on *port*, a viewer
    subscribed to the public events (all of them with ``--secrets``)."""
    from firmware_host.hil.replay import Replay
    from firmware_host.mqtt.contract import Topics
    from firmware_host.mqtt.subscriber import Subscriber
    from firmware_host.service.config import local_config
    from firmware_host.service.service import Service

    topics = Topics(recording.table)
    viewer = Viewer(args.secrets)
    with Subscriber(port, [topics.secure_event if args.secrets else topics.event],
                    client_id="tablectl-demo-viewer", on_message=viewer.show) as subscriber:
        service = Service(local_config(recording.table, args.profile or recording.profile, "127.0.0.1", port, tmp),
                          source="recording", chip_unit=recording.chip_unit)
        with Replay(recording) as replay:
            try:
                service.start()
                service.feed_from(replay.stream(factor))
                service.run(until_source_ends=True)
                engine = service.engine
                viewer.made = engine.seq
                subscriber.wait_for(lambda _: viewer.has_seen(engine.seq if args.secrets else 1, engine.hand_number),
                                    10)
            finally:
                service.close()          # before the replay closes: its source stops first
    return viewer
