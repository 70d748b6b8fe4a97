"""What the chip cameras film of a simulated table: the bets' video for a recording (docs/scenarios.md).

The simulator tells a :class:`Film` what each chip zone holds from when, and when an
arm reaches over a zone to change it; when the recording is saved the film renders
each camera's video (``mp4v``, a few frames a second) with :mod:`firmware_host.sim.render`
and writes the camera's calibration files, made the way ``tablectl calibrate table``
and ``calibrate chips`` make them: from pictures of the same table by the same renderer.

A zone's chips are one stack per denomination (ten chips at most a stack), placed
apart inside the zone's polygon as every filmed camera sees them, the same way for
the same chips: a pure function of the zone's content. The light is fixed and the
renderer's seed too (a chip looks the same from frame to frame); each frame gets
its own sensor noise (a live sensor never gives two equal frames).
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from calibration.geometry import CameraModel, Layout, calibrate_table, load_layout
from firmware_host import data as package_data
from firmware_host.hil.recording import CameraTrack
from firmware_host.sim.render import Arm, Scene, Stack, apart, arm_mask, calibration_shows, mount_camera, render
from firmware_host.vision.counter import learn_chips
from firmware_host.vision.feed import STABLE_FRAMES

FPS = 4                 # frames a second
STABLE = STABLE_FRAMES  # still frames the Stability of a camera feed needs
REACH_FRAMES = 3        # an arm is over a zone for this many frames while chips move
SETTLE_FRAMES = STABLE + 2   # after the arm: one frame of motion, N still frames, one spare
MAX_STACK = 10          # chips in one rendered stack
SPACING_MM = 10.0       # between two candidate stack spots of a zone
MARGIN_MM = 4.0         # between a stack and its zone's edge
SEED = 1                # the renderer's seed, the same for every frame
NOISE = 2.0             # sensor noise (grey levels, standard deviation), new each frame
LIGHT = (1.0, 0.98, 0.96)
RAIL_MM = 100.0         # an arm comes from this far beyond the felt's edge
ARM_TURNS = (0, 30, -30, 60, -60, 90, -90, 120, -120)   # degrees: the directions an arm may come from


@dataclass(frozen=True)
class Reach:
    """An arm over *zone* from *t0* to *t1*: a player's (from beyond the rail) or the dealer's."""

    t0: float
    t1: float
    zone: str
    dealer: bool


class Film:
    """The chip zones' contents over time, the arms, and the cameras filming them."""

    def __init__(self, colours: dict[int, str], fps: int = FPS, layout: str | Path | None = None) -> None:
        """*layout*: the zone layout TOML (default: the shipped ``camera/table8.toml``)."""
        if not 1 <= fps <= 30:
            raise ValueError(f"camera frame rate {fps}: expected 1 to 30 frames a second")
        if layout is None:
            with package_data.path(package_data.CAMERA_LAYOUT) as shipped:
                self.layout = load_layout(shipped)
        else:
            self.layout = load_layout(layout)
        self.fps, self.colours = fps, dict(colours)
        self.cameras: list[str] = []
        self.history: dict[str, list[tuple[float, tuple[tuple[int, int], ...]]]] = {}
        self.reaches: list[Reach] = []
        self._placed: dict[tuple[str, tuple[tuple[int, int], ...]], tuple[Stack, ...]] = {}
        self._starts: dict[tuple[str, bool], tuple[float, float]] = {}

    # -- what the script does ----------------------------------------------------------
    @property
    def reach_seconds(self) -> float:
        return REACH_FRAMES / self.fps

    @property
    def settle_seconds(self) -> float:
        return SETTLE_FRAMES / self.fps

    def add_camera(self, name: str) -> None:
        """Film with camera *name* of the layout too (the layout names its cameras if there is none)."""
        self.layout.mount(name)
        if name not in self.cameras:
            self.cameras.append(name)
            self._placed.clear()
            self._starts.clear()

    def counted(self, zone: str) -> bool:
        """Whether a filmed camera counts *zone*."""
        return any(zone in (z.name for z in self.layout.view(c).zones) for c in self.cameras)

    def content(self, zone: str, t: float) -> tuple[tuple[int, int], ...]:
        """What *zone* holds at *t*: ``(value, count)`` pairs, largest first."""
        held: tuple[tuple[int, int], ...] = ()
        for when, chips in self.history.get(zone, []):
            if when <= t:
                held = chips
        return held

    def move(self, t: float, over: str, changes: dict[str, dict[int, int]], dealer: bool = False) -> float:
        """An arm reaches over zone *over* from *t*; half-way, each zone of *changes* gets its new chips.

        Returns the reach's duration. Raises ValueError for a chip of no known colour or
        a zone where the stacks cannot be kept apart.
        """
        mid = round(t + self.reach_seconds / 2, 4)
        for zone, chips in changes.items():
            self.layout.zone(zone)
            unknown = sorted(set(chips) - set(self.colours))
            if unknown:
                raise ValueError(f"chips {unknown} have no colour in the profile: the camera cannot film them")
            pairs = tuple(sorted(((v, n) for v, n in chips.items() if n), reverse=True))
            self._place(zone, pairs)
            self.history.setdefault(zone, []).append((mid, pairs))
        self._start(over, dealer)
        self.reaches.append(Reach(round(t, 4), round(t + self.reach_seconds, 4), over, dealer))
        self._check_apart(mid)
        return self.reach_seconds

    # -- the pictures -----------------------------------------------------------------
    def _views(self) -> Iterator[tuple[Layout, CameraModel]]:
        for name in self.cameras:
            view = self.layout.view(name)
            yield view, mount_camera(view)

    def _spots(self, zone: str) -> list[tuple[float, float]]:
        """Stack spots inside *zone*, nearest its centre first."""
        polygon = self.layout.zone(zone)
        cx, cy = np.mean(polygon.polygon, axis=0)
        r = self.layout.chip_diameter / 2 + MARGIN_MM
        spots = []
        for i in range(-6, 7):
            for j in range(-6, 7):
                x, y = round(float(cx) + i * SPACING_MM, 1), round(float(cy) + j * SPACING_MM, 1)
                if all(polygon.contains(x + dx, y + dy) for dx in (-r, r) for dy in (-r, r)):
                    spots.append((x, y))
        return sorted(spots, key=lambda p: (math.hypot(p[0] - cx, p[1] - cy), p[1], p[0]))

    def _place(self, zone: str, chips: tuple[tuple[int, int], ...]) -> tuple[Stack, ...]:
        """One stack per denomination (split above MAX_STACK), apart in every camera's view."""
        key = (zone, chips)
        if key not in self._placed:
            piles = [(v, min(MAX_STACK, n - k)) for v, n in chips for k in range(0, n, MAX_STACK)]
            placed: list[Stack] = []
            spots = self._spots(zone)
            for value, count in piles:
                for x, y in spots:
                    stack = Stack(x, y, value, count)
                    if all(len(apart(placed + [stack], view, camera)) == len(placed) + 1
                           for view, camera in self._views()):
                        placed.append(stack)
                        spots.remove((x, y))
                        break
                else:
                    raise ValueError(f"{zone}: no room for {len(piles)} stacks apart in the cameras' view")
            self._placed[key] = tuple(placed)
        return self._placed[key]

    def _stacks(self, t: float) -> tuple[Stack, ...]:
        return tuple(s for zone in sorted(self.history) for s in self._place(zone, self.content(zone, t)))

    def _check_apart(self, t: float) -> None:
        stacks = self._stacks(t)
        for view, camera in self._views():
            if len(apart(stacks, view, camera)) != len(stacks):
                raise ValueError(f"at {t:.2f} s stacks of neighbouring zones would touch in camera "
                                 f"{view.camera}'s view")

    def _centre(self, zone: str) -> np.ndarray:
        return np.array(np.mean(self.layout.zone(zone).polygon, axis=0), dtype=float)

    def _start(self, zone: str, dealer: bool) -> tuple[float, float]:
        """Where an arm over *zone* comes from: the dealer's side, or the seat's card area for a bet,
        turned as little as needed to leave every camera's white reference patch in view."""
        key = (zone, dealer)
        if key not in self._starts:
            centre = self._centre(zone)
            seat = zone.replace("bet:", "seat:")
            towards = np.array([0.0, -800.0]) if dealer or seat == zone else self._centre(seat)
            way = (towards - centre) / max(float(np.linalg.norm(towards - centre)), 1e-6)
            for turn in ARM_TURNS:
                a = math.radians(turn)
                d = np.array([way[0] * math.cos(a) - way[1] * math.sin(a), way[0] * math.sin(a) + way[1] * math.cos(a)])
                start = self._beyond_rail(centre, d)
                if self._patches_clear(zone, start):
                    self._starts[key] = start
                    break
            else:
                raise ValueError(f"{zone}: an arm from any side would hide a camera's white reference patch")
        return self._starts[key]

    def _beyond_rail(self, centre: np.ndarray, d: np.ndarray) -> tuple[float, float]:
        """The point beyond the rail in direction *d* from *centre*."""
        half = np.array([self.layout.width / 2 + RAIL_MM, self.layout.depth / 2 + RAIL_MM])
        length = min(float((half[k] * np.sign(d[k]) - centre[k]) / d[k]) for k in (0, 1) if abs(d[k]) > 1e-9)
        return round(float(centre[0] + d[0] * length), 1), round(float(centre[1] + d[1] * length), 1)

    def _patches_clear(self, zone: str, start: tuple[float, float]) -> bool:
        """Whether an arm from *start* over *zone* leaves every camera's reference patch (and the
        ring around it, where the camera measures its focus) in view."""
        reach = Reach(0.0, 1.0, zone, False)
        for view, camera in self._views():
            arms = tuple(self._arm(reach, t, start) for t in (0.0, 0.99))
            covered = arm_mask(Scene(arms=arms), camera, view.mount().size)
            patch = view.mount().reference      # the view's reference patch
            uv = camera.project(np.hstack([np.array(patch), np.zeros((len(patch), 1))]))
            (x0, y0), (x1, y1) = uv.min(0), uv.max(0)
            pad = x1 - x0
            box = covered[max(int(y0 - pad), 0):int(y1 + pad) + 1, max(int(x0 - pad), 0):int(x1 + pad) + 1]
            if box.any():
                return False
        return True

    def _arm(self, reach: Reach, t: float, start: tuple[float, float] | None = None) -> Arm:
        """The arm of *reach* at *t*: it keeps reaching further in, so every frame moves."""
        cx, cy = self._centre(reach.zone)
        x0, y0 = start or self._start(reach.zone, reach.dealer)
        share = 0.8 + 0.25 * (t - reach.t0) / (reach.t1 - reach.t0)
        index = sorted(z.name for z in self.layout.zones).index(reach.zone)
        return Arm(x0, y0, x0 + (cx - x0) * share, y0 + (cy - y0) * share, 90.0,
                   skin=0 if reach.dealer else index, sleeve=0 if reach.dealer else index + 1)

    def scene(self, t: float) -> Scene:
        """The table at *t*: every chip zone's stacks, the arms over zones, the fixed light."""
        arms = tuple(self._arm(r, t) for r in self.reaches if r.t0 <= t < r.t1)
        return Scene(stacks=self._stacks(t), arms=arms, light=LIGHT, noise=0.0, colours=dict(self.colours))

    # -- the files ----------------------------------------------------------------------
    def tracks(self, end: float) -> list[CameraTrack]:
        """Every camera's track: a frame every 1/fps s from 0 to *end*; files written on save."""
        times = [round(k / self.fps, 4) for k in range(int(end * self.fps) + 1)]
        return [CameraTrack(name, list(times), write=self.write) for name in self.cameras]

    def write(self, directory: Path, track: CameraTrack) -> None:
        """Render *track*'s video and write its table and chip calibrations into *directory*."""
        full, view = self.layout, self.layout.view(track.name)
        camera = mount_camera(view)
        table = render(Scene(colours=dict(self.colours), light=LIGHT), view, camera, seed=SEED)
        calib = calibrate_table(table, full, track.name)
        shows = {value: render(scene, view, camera, seed=value)
                 for value, scene in calibration_shows(view, self.colours).items()}
        calib.save(directory / track.table)
        learn_chips(calib, shows).save(directory / track.chips)
        self._video(directory / track.video, view, camera, track)

    def _video(self, path: Path, view: Layout, camera: CameraModel, track: CameraTrack) -> None:
        size = view.mount(track.name).size
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), self.fps, size)
        if not writer.isOpened():
            raise RuntimeError(f"OpenCV cannot write mp4v to {path}")
        shown: Scene | None = None
        picture = np.zeros(0, np.float32)
        noise = np.random.default_rng(self.cameras.index(track.name))
        try:
            for t in track.times:
                scene = self.scene(t)
                if scene != shown:          # still frames: one rendering, new noise each
                    shown, picture = scene, render(scene, view, camera, size=size, seed=SEED).astype(np.float32)
                frame = noise.standard_normal(picture.shape, dtype=np.float32)
                frame *= NOISE
                frame += picture
                writer.write(np.clip(frame, 0, 255, out=frame).astype(np.uint8))
        finally:
            writer.release()
