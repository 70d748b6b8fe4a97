"""Replay a recording through the same driver code as the table, into the hand engine.

Every stream goes through its real driver: the shoe's bytes through a pty read
by pyserial into the shoe driver's protocol session, the reader polls through
the zone driver's debounce, the GPIO edges through gpiozero's ``MockFactory``
into the console driver, the hall's commands as observations, each camera's
video through the camera driver (OpenCV reading the file) into the chip
counter, one frame at each of its recorded times. One thread, the recording's
clock: the same recording gives the same events, byte for byte, at any speed.
"""
from __future__ import annotations

import os
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import serial
from gpiozero.pins.mock import MockFactory

from calibration.deck import Deck, Registry
from calibration.readers import parse_readers
from drivers.camera import open_replay
from drivers.console import Console, load_console_pins
from drivers.shoe import ShoeSession
from drivers.zones import PollRecord, ZoneTracker
from firmware_host.events import Event
from firmware_host.hil.recording import CameraTrack, Line, Recording, RecordingError, merge
from firmware_host.observations import Observation, from_dict
from firmware_host.rules.engine import HandEngine
from firmware_host.rules.profile import resolve_profile
from firmware_host.service.devices import choosing_deck
from firmware_host.vision.feed import CameraFeed, load_camera_calibration, unsure

TICK = 0.5      # seconds between two checks of the shoe's heartbeat timer


class _Pty:
    """A pty pair: bytes written to the master come out of a real pyserial port."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        self.port = serial.Serial(os.ttyname(slave), 115200, timeout=1.0)
        os.close(slave)
        os.set_blocking(self.master, False)

    def carry(self, data: bytes) -> bytes:
        os.write(self.master, data)
        return bytes(self.port.read(len(data)))

    def answer(self, data: bytes) -> None:
        """The host's acks: written to the port, drained from the master (the recording has them)."""
        if data:
            self.port.write(data)
            self.port.flush()
            try:
                os.read(self.master, 4096)
            except BlockingIOError:
                pass

    def close(self) -> None:
        self.port.close()
        os.close(self.master)


def _camera(directory: Path, track: CameraTrack) -> CameraFeed:
    """One recorded camera: its video read by the camera driver, counted with its own calibration
    (the recording's clock drives it: one frame per tick); errors are RecordingErrors naming the file."""
    try:
        calib, models = load_camera_calibration(directory / track.table, directory / track.chips)
        return CameraFeed(track.name, open_replay(str(directory / track.video), times=track.times), calib, models)
    except ValueError as exc:
        raise RecordingError(str(exc)) from None
    except OSError as exc:
        raise RecordingError(f"camera {track.name}: {exc}") from None


@dataclass
class Replay:
    """The drivers and the engine of one replay."""

    recording: Recording
    profile: str | None = None
    events: list[Event] = field(default_factory=list)
    now: float = 0.0

    def __post_init__(self) -> None:
        rec = self.recording
        table = tomllib.loads(rec.table_profile)
        decks = [Deck(d["deck"], d["back"], d["cards"]) for d in rec.decks]
        self.registry = Registry(decks, rec.in_play)
        self.readers = ZoneTracker.for_table(parse_readers(table, "recording.json:table_profile"),
                                             self.registry.lookup)
        self.shoe = ShoeSession(self.registry)
        self.engine = HandEngine(resolve_profile(self.profile or rec.profile), rec.table, chip_unit=rec.chip_unit)
        self._pending: list[Observation] = []
        self.factory = MockFactory()
        self.console = Console(load_console_pins(table, "recording.json:table_profile"),
                               choosing_deck(self.registry, self._pending.append),
                               clock=lambda: self.now, pin_factory=self.factory, bounce_time=None,
                               blink=False)
        self.pty = _Pty()
        self._next_tick = TICK
        self.cameras: dict[str, CameraFeed] = {}
        try:
            for track in rec.cameras:
                if rec.directory is None:
                    raise RecordingError("the recording has cameras but no directory to read their videos from")
                self.cameras[track.name] = _camera(rec.directory, track)
            for feed in self.cameras.values():  # each camera's frames a second view of the others' zones
                feed.others = [other for other in self.cameras.values() if other is not feed]
        except BaseException:
            self.close()        # what was opened before the bad camera
            raise
        self.timeline = self._timeline()
        self._streams: dict[str, Callable[[Line, float], list[Observation]]] = {
            "shoe": self._shoe, "reader": self._reader, "gpio": self._gpio, "hall": self._recorded,
            "camera": self._recorded, "frame": self._frame}
        """What each stream's line goes through: its driver (``frame``: a camera's frame is due)."""

    def _timeline(self) -> list[Line]:
        """The recorded lines with a ``frame`` item at each camera frame's time (lines first at equal times)."""
        frames = [{"t": t, "s": "frame", "camera": track.name} for track in self.recording.cameras for t in track.times]
        return merge(self.recording.lines, frames) if frames else self.recording.lines

    def observations(self, line: Line) -> list[Observation]:
        """What the drivers make of one recorded line."""
        t = line["t"]
        out: list[Observation] = []
        while self._next_tick < t:           # the live driver checks its heartbeat timer every TICK
            self.now = self._next_tick
            out += self.shoe.tick(self._next_tick)
            self._next_tick = round(self._next_tick + TICK, 6)
        self.now = t
        out += self.shoe.tick(t)
        through = self._streams.get(line["s"])
        if through is not None:
            out += through(line, t)
        return out

    def _shoe(self, line: Line, t: float) -> list[Observation]:
        """The shoe's bytes through the pty into its protocol session, or its cable pulled or plugged."""
        if line.get("event") == "unplugged":
            return self.shoe.disconnected(t, line.get("detail", "USB cable pulled"))
        if line.get("event") == "plugged":
            return self.shoe.connected(t, line.get("detail", "USB cable back"))
        if line.get("dir") == "rx":
            observations, acks = self.shoe.feed(self.pty.carry(bytes.fromhex(line["hex"])), t)
            self.pty.answer(acks)
            return observations
        return []

    def _reader(self, line: Line, t: float) -> list[Observation]:
        return self.readers.feed(PollRecord.from_dict({k: v for k, v in line.items() if k != "s"}))

    def _gpio(self, line: Line, t: float) -> list[Observation]:
        """An edge on a console pin, through gpiozero's mock pin into the console driver."""
        pin = self.factory.pin(line["pin"])
        if line["level"] == 0:
            pin.drive_low()
        else:
            pin.drive_high()
        out = list(self._pending)
        self._pending.clear()
        return out

    def _recorded(self, line: Line, t: float) -> list[Observation]:
        """An observation recorded as such (from the hall, or a camera without video)."""
        return [from_dict(line["obs"])]

    def _frame(self, line: Line, t: float) -> list[Observation]:
        """A camera's frame is due: read and counted; the dealer asked about the zones it cannot count."""
        out = self.cameras[line["camera"]].tick(t)
        self.console.ask(unsure(self.cameras.values()))
        return out

    def stream(self, speed: float | None = None) -> Iterator[Observation]:
        """The drivers' observations, paced on the recording's clock (*speed* as for :meth:`run`):
        a source for the service, which feeds its own engine."""
        start = time.monotonic()
        for line in self.timeline:
            if speed:
                delay = start + line["t"] / speed - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            yield from self.observations(line)

    def run(self, *, speed: float | None = None, on_event: Callable[[Event], None] | None = None,
            on_progress: Callable[[int, int], None] | None = None) -> list[Event]:
        """Replay every line; *speed* None = as fast as possible, 1 = real time, N = N times."""
        start = time.monotonic()
        total = len(self.timeline)
        for number, line in enumerate(self.timeline, 1):
            if on_progress and (number % 200 == 0 or number == total):
                on_progress(number, total)
            if speed:
                delay = start + line["t"] / speed - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            for obs in self.observations(line):
                for event in self.engine.feed(obs):
                    self.console.show((event,))
                    self.events.append(event)
                    if on_event:
                        on_event(event)
        return self.events

    def close(self) -> None:
        for camera in self.cameras.values():
            camera.close()
        self.console.close()
        self.pty.close()
        self.factory.close()

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay(recording: Recording, **kwargs: Any) -> list[Event]:
    """The events of *recording*, replayed as fast as possible."""
    with Replay(recording) as run:
        return run.run(**kwargs)


def lines_of(events: list[Event]) -> Iterator[str]:
    for event in events:
        yield event.to_json()
