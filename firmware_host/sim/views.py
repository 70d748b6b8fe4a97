"""Where a chip could hide from every camera
(``python -m firmware_host.sim.views SET... [--extra NAME:X,Y,Z:AX,AY,AZ[:FOCAL]]...``).

For each labelled zone-scene (a sequence's first frame, each stack at its labelled base ``at``): whether a
single chip could lie in the zone wholly hidden behind the stacks from the camera that counts it (the
counter then says ``behind``: no picture from there shows it), and whether from every camera whose picture
holds that spot too. Cameras at their nominal mounts (the layout's, and the *extra* ones proposed). The
measurement behind docs/vision.md, "What a second view of each zone would give".
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.geometry import CameraModel, Layout, TableCalibration, Zone
from calibration.mount import mount_camera
from firmware_host.vision.evaluation import EvalSet, load_set
from firmware_host.vision.projection import StackProjection
from firmware_host.vision.stack import OUTLINE_BLUR_PX

__all__ = ["Hiding", "camera", "hidden", "hiding", "zone_scenes"]

STEP_MM = 4.0  # the grid of chip centres tried in each zone
Stack = tuple[float, float, int]  # base centre (mm) and chips


@dataclass
class Hiding:
    """Of *scenes* zone-scenes with stacks, those where a chip could hide from the counting camera
    (*one*) and from every camera holding the spot (*every*), per zone."""

    scenes: int = 0
    one: Counter[str] = field(default_factory=Counter)
    every: Counter[str] = field(default_factory=Counter)

    def figures(self) -> dict[str, object]:
        n = max(self.scenes, 1)
        return {"scenes": self.scenes, "hidden_one_view": sum(self.one.values()),
                "hidden_every_view": sum(self.every.values()),
                "hidden_one_view_share": round(100 * sum(self.one.values()) / n, 2),
                "hidden_every_view_share": round(100 * sum(self.every.values()) / n, 2),
                "per_zone": {z: [self.one[z], self.every[z]] for z in sorted(self.one)}}


def camera(layout: Layout, model: CameraModel, size: tuple[int, int]) -> StackProjection:
    """A camera (*model*, its picture *size*) as the counter's geometry sees it."""
    return StackProjection(TableCalibration(layout, model, size, (), 0.0))


def holds(geo: StackProjection, x: float, y: float) -> bool:
    """Whether the camera's picture holds a chip lying at (x, y) whole."""
    w, h = geo.cam.K[0, 2] * 2, geo.cam.K[1, 2] * 2
    p = geo.outline(x, y, 1)
    return bool((p >= 0).all() and (p[:, 0] < w).all() and (p[:, 1] < h).all())


def hidden(geo: StackProjection, stacks: Sequence[Stack], x: float, y: float) -> bool:
    """Whether a chip lying at (x, y) is wholly within the outlines of the stacks nearer the camera,
    each widened for the blur as the counter's outline test widens it (``vision.hiding``)."""
    d = np.hypot(x - geo.cam_xy[0], y - geo.cam_xy[1])
    front = [geo.outline(sx, sy, n, OUTLINE_BLUR_PX) for sx, sy, n in stacks
             if np.hypot(sx - geo.cam_xy[0], sy - geo.cam_xy[1]) < d]
    if not front:
        return False
    chip = geo.outline(x, y, 1)
    every = np.vstack(front + [chip])
    x0, y0 = np.floor(every.min(0)).astype(int) - 2
    x1, y1 = np.ceil(every.max(0)).astype(int) + 2
    cover, own = np.zeros((y1 - y0, x1 - x0), np.uint8), np.zeros((y1 - y0, x1 - x0), np.uint8)
    for p in front:
        cv2.fillConvexPoly(cover, np.round(p - (x0, y0)).astype(np.int32), 1)
    cv2.fillConvexPoly(own, np.round(chip - (x0, y0)).astype(np.int32), 1)
    return not (own.astype(bool) & ~cover.astype(bool)).any()


def _spots(zone: Zone, stacks: Sequence[Stack], r: float) -> list[tuple[float, float]]:
    """Chip centres in the zone clear of the stacks' footprints, every ``STEP_MM``."""
    xs, ys = np.array(zone.polygon).T
    at = np.array([(sx, sy) for sx, sy, _ in stacks])
    return [(float(x), float(y)) for x in np.arange(xs.min(), xs.max() + 1, STEP_MM)
            for y in np.arange(ys.min(), ys.max() + 1, STEP_MM)
            if zone.inside(x, y) >= 0 and np.linalg.norm(at - (x, y), axis=1).min() >= 2 * r - 2.0]


def hiding(layout: Layout, cameras: dict[str, StackProjection],
           scenes: Iterable[tuple[str, Sequence[Stack]]]) -> Hiding:
    """Where a chip could hide in each zone-scene: from the camera counting the zone (the layout's), and
    from every one of *cameras* whose picture holds the spot."""
    counting = {z: m.name for m in layout.cameras for z in m.zones}
    result = Hiding()
    for name, stacks in scenes:
        result.scenes += 1
        counter = cameras[counting[name]]
        spots = [s for s in _spots(layout.zone(name), stacks, layout.chip_diameter / 2) if hidden(counter, stacks, *s)]
        if not spots:
            continue
        result.one[name] += 1
        if any(all(hidden(g, stacks, *s) for g in cameras.values() if holds(g, *s)) for s in spots):
            result.every[name] += 1
    return result


def zone_scenes(evalset: EvalSet) -> list[tuple[str, list[Stack]]]:
    """Each sequence's first frame's chip zones holding stacks at labelled places, not covered."""
    seen, scenes = set(), []
    for f in evalset.frames:
        if (f.camera, f.sequence) in seen:
            continue
        seen.add((f.camera, f.sequence))
        scenes += [(name, [(x, y, len(s)) for (x, y), s in zip(t.at, t.stacks)])
                   for name, t in f.zones.items() if t.at and not t.covered]
    return scenes


def _extra(text: str) -> tuple[str, tuple[float, ...], tuple[float, ...], float | None]:
    """NAME:X,Y,Z:AX,AY,AZ[:FOCAL] (mm, px): a camera's name, where it stands, where it looks, its lens."""
    name, *fields = text.split(":")
    try:
        points = tuple(tuple(float(v) for v in p.split(",")) for p in fields[:2])
        focal = float(fields[2]) if len(fields) == 3 else None
    except ValueError:
        points = ()
    if len(points) != 2 or any(len(p) != 3 for p in points) or len(fields) > 3:
        raise argparse.ArgumentTypeError(f"expected NAME:X,Y,Z:AX,AY,AZ[:FOCAL] in mm and px, got {text!r}")
    return name, points[0], points[1], focal


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m firmware_host.sim.views", description=__doc__.split("\n\n")[1])
    parser.add_argument("sets", nargs="+", type=Path, help="labelled sets whose labels place each stack (at)")
    parser.add_argument("--extra", type=_extra, action="append", default=[], metavar="NAME:X,Y,Z:AX,AY,AZ[:FOCAL]",
                        help="another camera at X,Y,Z aimed at AX,AY,AZ (mm); its focal length in px (default:"
                        " the layout's first camera's; repeat)")
    args = parser.parse_args(argv)
    sets = [load_set(s) for s in args.sets]
    layout = sets[0].layout
    lens = layout.cameras[0]
    cameras = {m.name: camera(layout, mount_camera(layout, m.name), m.size) for m in layout.cameras}
    for name, at, aim, focal in args.extra:
        cameras[name] = camera(layout, CameraModel.looking_at(at, aim, focal or lens.focal_px, lens.size), lens.size)
    result = hiding(layout, cameras, [s for e in sets for s in zone_scenes(e)])
    figures = result.figures()
    print(f"zone-scenes with stacks: {result.scenes}; cameras: {', '.join(cameras)}")
    print(f"a chip could hide from the counting camera: {figures['hidden_one_view']} "
          f"({figures['hidden_one_view_share']} %); from every camera holding it: {figures['hidden_every_view']} "
          f"({figures['hidden_every_view_share']} %)")
    print("  zone   hidden from one view, from every view")
    for zone in sorted(result.one):
        print(f"  {zone:6} {result.one[zone]:4} {result.every[zone]:4}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
