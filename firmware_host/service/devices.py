"""The table's devices, opened together: shoe, zone readers, console, chip cameras; one stream
of observations.

The service reads :meth:`Devices.observations` as its source and gives the
engine's events back to :meth:`Devices.show` (the console's alert LED and
buzzer). Each chip camera (:class:`~firmware_host.vision.feed.CameraFeed`) runs in
its own thread; a count it cannot make with confidence lights the console's
chips LED. A :class:`~firmware_host.service.recorder.Recorder` may listen to the raw
streams of the shoe, the readers and the console (not the cameras' video yet).
Everything is closable; each driver releases only its own resources.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from calibration.deck import Registry
from calibration.readers import ReaderTable
from drivers.console import Console, ConsolePins
from drivers.shoe import Shoe
from drivers.zones import Chip, ZoneReaders
from firmware_host.events import Event
from firmware_host.observations import ConsolePress, DeviceFault, DeviceRecovered, Observation
from firmware_host.service.notify import Liveness
from firmware_host.vision.feed import CameraFeed, unsure

if TYPE_CHECKING:
    from gpiozero.pins import Factory

    from firmware_host.service.recorder import Recorder


STALL_SECONDS = 10.0
"""A device thread that has not turned its loop for this long is stuck (a read that never returns)."""


def choosing_deck(registry: Registry, put: Callable[[Observation], None]) -> Callable[[Observation], None]:
    """The console's observations to *put*; the dealer's new-hand press also tells *registry* that
    the next card from the shoe says which deck is in play (002 C.1). Live and in replays."""
    def sink(obs: Observation) -> None:
        if isinstance(obs, ConsolePress) and obs.button == "new-hand":
            registry.next_hand()
        put(obs)
    return sink


class Devices:
    """Shoe on *shoe_port*, the MFRC522s *chips* of *readers*, the console on *console_pins*,
    the chip *cameras* (:class:`~firmware_host.vision.feed.CameraFeed`, already opened: closed here)."""

    def __init__(self, *, shoe_port: str, registry: Registry, readers: ReaderTable, chips: Mapping[str, Chip],
                 console_pins: ConsolePins, recorder: Recorder | None = None,
                 clock: Callable[[], float] = time.monotonic, pin_factory: Factory | None = None,
                 cameras: Sequence[CameraFeed] = ()) -> None:
        self._queue: queue.Queue[Observation] = queue.Queue()
        self._stop = threading.Event()
        self._recorder = recorder
        clock = recorder.now if recorder is not None else clock
        self.zones = ZoneReaders(readers, chips, registry.lookup, clock,
                                 record=recorder.poll if recorder is not None else None)
        self.liveness = Liveness(STALL_SECONDS)
        """When each device thread last turned its loop (systemd's watchdog stops on a stuck one)."""
        self.liveness.beat("zone-readers")
        self._poller = threading.Thread(target=self.zones.run, args=(self._queue.put, self._polled),
                                        name="zone-readers", daemon=True)
        self.shoe = Shoe(shoe_port, registry, clock=clock, on_observation=self._from_shoe,
                         recorder=recorder.shoe if recorder is not None else None)
        self.registry = registry
        try:
            self.console = Console(console_pins, choosing_deck(registry, self._queue.put), clock=clock,
                                   pin_factory=pin_factory,
                                   on_edge=recorder.edge if recorder is not None else None)
        except Exception:
            self.shoe.close()
            raise
        self._poller.start()
        self.cameras = list(cameras)
        for feed in self.cameras:  # each camera's frames a second view of the others' zones (vision.witness)
            feed.others = [other for other in self.cameras if other is not feed]
        self._clock = clock
        for feed in self.cameras:
            self.liveness.beat(f"camera:{feed.name}")
        self._filming = [threading.Thread(target=self._film, args=(feed,), name=f"camera-{feed.name}", daemon=True)
                         for feed in self.cameras]
        for thread in self._filming:
            thread.start()

    def _film(self, feed: CameraFeed) -> None:
        """One camera, frame after frame, until :meth:`close`: its observations, and the dealer
        asked to look at the zones no camera can count with confidence."""
        while not self._stop.is_set():
            self.liveness.beat(f"camera:{feed.name}")
            try:
                for obs in feed.tick(self._clock()):
                    self._queue.put(obs)
            except Exception as exc:  # noqa: BLE001 - a camera that breaks is a fault, never the end
                self._queue.put(DeviceFault(self._clock(), f"camera:{feed.name}", "error", repr(exc)))
                self._stop.wait(1.0)
            self.console.ask(unsure(self.cameras))
            if feed.missed:  # a live camera blocks until its next frame; a file that has ended does not
                self._stop.wait(0.05)

    def _polled(self) -> bool:
        """The zone readers' loop turned: should it stop?"""
        self.liveness.beat("zone-readers")
        return self._stop.is_set()

    def stalled(self) -> list[str]:
        """The device threads stuck for longer than :data:`STALL_SECONDS` (the shoe's reader included)."""
        self.liveness.beat("shoe", self.shoe.turned)
        return self.liveness.stalled()

    def _from_shoe(self, obs: Observation) -> None:
        if self._recorder is not None:
            if isinstance(obs, DeviceFault) and obs.fault == "disconnected":
                self._recorder.shoe_event(obs.t, "unplugged", obs.detail)
            elif isinstance(obs, DeviceRecovered) and obs.detail.startswith("opened"):
                self._recorder.shoe_event(obs.t, "plugged", obs.detail)
        self._queue.put(obs)

    def observations(self, stop: Callable[[], bool] = lambda: False) -> Iterator[Observation]:
        """Every observation of every device, in arrival order, until *stop()* or :meth:`close`."""
        while not (stop() or self._stop.is_set()):
            try:
                yield self._queue.get(timeout=0.05)
            except queue.Empty:
                continue

    def drain(self) -> list[Observation]:
        """What is waiting now, without blocking."""
        out: list[Observation] = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out

    def show(self, events: Iterable[Event]) -> None:
        """The engine's events, for the console's alert."""
        self.console.show(events)

    def close(self) -> None:
        self._stop.set()
        self._poller.join(5)
        for thread in self._filming:
            thread.join(5)
        for feed in self.cameras:
            feed.close()
        self.zones.close()
        self.shoe.close()
        self.console.close()

    def __enter__(self) -> Devices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def record_session(recorder: Recorder, *, shoe_port: str, registry: Registry, readers: ReaderTable,
                   chips: Mapping[str, Chip], console_pins: ConsolePins, stop: Callable[[], bool],
                   pin_factory: Factory | None = None, cameras: Sequence[CameraFeed] = ()) -> list[Observation]:
    """Run the table's real drivers until ``stop()``, recording their raw streams.

    *readers* is the table's :class:`~calibration.readers.ReaderTable`, *chips* its MFRC522s
    (``drivers.zones.open_real``), *cameras* its chip cameras (``CameraFeed``s whose camera is
    stamped by ``recorder.now``); returns the observations the drivers made live.
    """
    for feed in cameras:
        recorder.film(feed)
    with Devices(shoe_port=shoe_port, registry=registry, readers=readers, chips=chips, console_pins=console_pins,
                 recorder=recorder, pin_factory=pin_factory, cameras=cameras) as devices:
        seen = list(devices.observations(stop))
    recorder.close()
    return seen + devices.drain()
