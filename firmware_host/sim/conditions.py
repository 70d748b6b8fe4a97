"""Evaluation sets under named conditions, from the renderer (``python -m firmware_host.sim.conditions OUT``).

Each condition is one set in the evaluation format (``docs/vision.md``), tagged with its
name: the cameras calibrated under the calibration's conditions, then frames under the
frames' conditions. Light conditions calibrate in the usual light and film in another (what
the colour correction must hold); felt and lens conditions calibrate and film alike (what
calibration must cope with). These are the renderer's own pictures, made by the same hands
as the counter: ``docs/vision-eval.md`` has the independent, physically based sets.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.geometry import CameraModel, Layout, load_layout
from calibration.mount import mount_camera
from firmware_host.sim.render import (
    HOUSE_004,
    Scene,
    Stack,
    calibration_shows,
    eval_frame,
    labels_text,
    render,
    sequence,
    zone_truth,
)

__all__ = ["CONDITIONS", "Condition", "write_condition_set"]

WARM = (0.55, 0.06, 0.0, 0.04, 0.85, 0.05, 0.0, 0.08, 1.15)  # a warm lamp, BGR mixing (row-major)
HARSH = (0.30, 0.10, 0.0, 0.05, 0.75, 0.10, 0.0, 0.15, 1.30)  # beyond what one calibration covers


@dataclass(frozen=True)
class Condition:
    """What changes from the usual scene: at calibration, in the frames, and the camera's lens."""

    calibration: dict[str, Any] = field(default_factory=dict)
    frames: dict[str, Any] = field(default_factory=dict)
    light: float = 1.0  # the frames' light level, times the usual
    dist: tuple[float, float] = (0.0, 0.0)
    mixed: float = 0.0  # the share of stacks of two chips or more made of two denominations
    touching: float = 0.0  # the share of stacks given a neighbour touching it, side by side as the camera sees it
    behind: float = 0.0  # the share of stacks (two chips or more) given one or two chips touching them behind
    tall: bool = False  # stacks of 8 chips to the layout's max_stack (render.random_scene)


CONDITIONS = {
    "usual": Condition(),
    "warm-dim": Condition(frames={"illuminant": WARM, "tone": 0.85, "flare": 4.0}, light=0.45),
    "dim": Condition(light=0.4),
    "tone-curve": Condition(frames={"tone": 0.7, "flare": 6.0}),
    "spots": Condition(frames={"spots": ((0.35, 0.55, 0.6), (0.75, 0.7, 0.5))}),
    "blur": Condition(frames={"blur": 2.0}),
    "felt-blue": Condition(calibration={"felt": (120, 70, 25)}, frames={"felt": (120, 70, 25)}),
    "felt-beige": Condition(calibration={"felt": (150, 185, 205)}, frames={"felt": (150, 185, 205)}),
    "felt-grey": Condition(calibration={"felt": (84, 80, 78)}, frames={"felt": (84, 80, 78)}),
    "distortion": Condition(dist=(-0.12, 0.03)),
    "harsh-light": Condition(frames={"illuminant": HARSH}),
    "mixed": Condition(mixed=0.6),
    "touching": Condition(touching=0.6),
    "printed": Condition(calibration={"betting_line": 235.0}, frames={"betting_line": 235.0}),
    "behind": Condition(behind=0.7),
    "tall": Condition(tall=True),
    "spots-tall": Condition(frames={"spots": ((0.35, 0.55, 0.6), (0.75, 0.7, 0.5))}, tall=True),
}
BEHIND_OFF = 50.0  # degrees: how far off the camera's line of sight a chip touching a stack behind it lies, at most


def _mixed(scene: Scene, share: float) -> Scene:
    """*scene* with a *share* of its stacks (two chips or more) made of two denominations, each
    stack drawn from its own place, so a stack stays the same from frame to frame."""
    if not share:
        return scene
    values = sorted(scene.colours)
    stacks = []
    for stack in scene.stacks:
        rng = np.random.default_rng([int(abs(stack.x) * 10), int(abs(stack.y) * 10), stack.count])
        if stack.count >= 2 and rng.random() < share:
            other = int(rng.choice([v for v in values if v != stack.value]))
            below = rng.choice([other, stack.value], size=stack.count - 1).tolist()
            below[0] = other  # at least the bottom chip is of the other denomination
            stack = Stack.mixed(stack.x, stack.y, [*below, stack.value])
        stacks.append(stack)
    return dataclasses.replace(scene, stacks=tuple(stacks))


def _neighbours(scene: Scene, share: float, layout: Layout, camera: CameraModel, salt: int,
                toward: Callable[[np.ndarray, np.random.Generator], tuple[float, float]],
                counts: tuple[int, int], least: int = 1) -> Scene:
    """*scene* with a *share* of its stacks (of *least* chips or more) given a neighbour touching it, in
    the direction *toward* gives (a unit vector, from the line of sight to the stack), of any denomination
    and ``counts`` chips (low, high exclusive), in the same zone and clear of every other stack; each drawn
    from its stack's place (and *salt*), so a scene's frames keep them."""
    if not share:
        return scene
    eye = camera.position()[:2]
    values = sorted(scene.colours)
    stacks = list(scene.stacks)
    reach = layout.chip_diameter + 0.3
    for stack in scene.stacks:
        rng = np.random.default_rng([int(abs(stack.x) * 10), int(abs(stack.y) * 10), stack.count, salt])
        if rng.random() >= share or stack.count < least:
            continue
        dx, dy = toward(np.array([stack.x, stack.y]) - eye, rng)
        x, y = stack.x + dx * reach, stack.y + dy * reach
        zone = next((z for z in layout.zones if z.kind in ("bet", "pot") and z.contains(stack.x, stack.y)), None)
        if zone is None or not zone.contains(x, y) or any(
                math.hypot(o.x - x, o.y - y) < layout.chip_diameter + 0.2 for o in stacks):
            continue
        value, count = int(rng.choice(values)), int(rng.integers(*counts))
        stacks.append(Stack(round(float(x), 1), round(float(y), 1), value, count))
    return dataclasses.replace(scene, stacks=tuple(stacks))


def _touching(scene: Scene, share: float, layout: Layout, camera: CameraModel) -> Scene:
    """*scene* with a *share* of its stacks given a neighbour that touches it, beside it as the
    camera sees it (across its line of sight), in the same zone."""
    def across(sight: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
        side = np.array([-sight[1], sight[0]]) / np.linalg.norm(sight) * rng.choice([-1.0, 1.0])
        return float(side[0]), float(side[1])
    return _neighbours(scene, share, layout, camera, 7, across, (1, 9))


def _behind(scene: Scene, share: float, layout: Layout, camera: CameraModel) -> Scene:
    """*scene* with a *share* of its stacks (two chips or more) given one chip, or a stack of two,
    touching it behind as the camera sees it (up to ``BEHIND_OFF`` degrees off its line of sight), in the
    same zone: what a stack can hide in part or whole (docs/vision.md, "A chip wholly hidden behind a
    stack")."""
    def behind(sight: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
        angle = math.atan2(sight[1], sight[0]) + math.radians(rng.uniform(-BEHIND_OFF, BEHIND_OFF))
        return math.cos(angle), math.sin(angle)
    return _neighbours(scene, share, layout, camera, 11, behind, (1, 3), least=2)


def _scene(scene: Scene, changes: dict[str, Any], light: float = 1.0) -> Scene:
    b, g, r = (level * light for level in scene.light)
    return dataclasses.replace(scene, **changes, light=(b, g, r))


def write_condition_set(out: str | Path, layout_path: str | Path, name: str, scenes: int = 1, frames: int = 10,
                        seed: int = 404, paired: bool = False) -> Path:
    """The set of condition *name* in *out*/*name*: per camera its calibration pictures and
    *scenes* sequences of *frames* (at least 10) frames. *paired* (in *out*/*name*-paired): every
    camera films the whole table, each camera's scenes together, and frames of one moment share a
    ``scene`` (a second view of each zone: ``vision.witness``)."""
    condition = CONDITIONS[name]
    root = Path(out) / (f"{name}-paired" if paired else name)
    root.mkdir(parents=True, exist_ok=True)
    full = load_layout(layout_path)
    jpeg = [cv2.IMWRITE_JPEG_QUALITY, 88]
    rng = np.random.default_rng(seed)
    labels: dict[str, Any] = {"format": "pokertable-vision-eval/1", "profile": "004", "calibration": {},
                              "frames": []}
    views = {}
    for mount in full.cameras:
        layout = full.view(mount.name)
        camera = dataclasses.replace(mount_camera(layout), dist=condition.dist)
        views[mount.name] = layout, camera
        table = f"table_{mount.name}.jpg"
        cv2.imwrite(str(root / table), render(_scene(Scene(colours=HOUSE_004), condition.calibration), layout,
                                              camera, seed=1), jpeg)
        chips = {}
        shows = calibration_shows(layout, HOUSE_004, betting_line=condition.calibration.get("betting_line", 0.0))
        for value, show in shows.items():
            chips[str(value)] = f"chips_{mount.name}_{value}.jpg"
            cv2.imwrite(str(root / chips[str(value)]),
                        render(_scene(show, condition.calibration), layout, camera, seed=value), jpeg)
        labels["calibration"][mount.name] = {"table": [table], "chips": chips}
    filmed: dict[str, list[list[Scene]]] = {}  # per camera, its sequences (the scenes of its zones)
    for mount_name, (layout, camera) in views.items():
        filmed[mount_name] = []
        for s in range(scenes):
            filmed[mount_name].append([])
            for scene in sequence(rng, layout, HOUSE_004, frames, condition.tall):
                scene = _mixed(_scene(scene, condition.frames, condition.light), condition.mixed)
                scene = _touching(scene, condition.touching, layout, camera)
                filmed[mount_name][s].append(_behind(scene, condition.behind, layout, camera))
    for c, (mount_name, (layout, camera)) in enumerate(views.items()):
        for s in range(scenes):
            for k, scene in enumerate(filmed[mount_name][s]):
                if paired:  # the whole table: every camera's stacks, arms and cards at that moment
                    moment = [filmed[m][s][k] for m in views]
                    scene = dataclasses.replace(scene, stacks=tuple(x for m in moment for x in m.stacks),
                                                arms=tuple(a for m in moment for a in m.arms),
                                                cards=tuple({n: up for m in moment[::-1] for n, up in m.cards}.items()))
                file = f"{mount_name}_s{s:02d}_f{k}.jpg"
                cv2.imwrite(str(root / file), render(scene, layout, camera, seed=100000 * c + 1000 * s + k), jpeg)
                frame = eval_frame(file, mount_name, f"{mount_name}-s{s:02d}", round(k / 10, 2),
                                   zone_truth(scene, layout, camera), scene.cards)
                frame["tags"] = [name] + frame["tags"][1:]
                if paired:
                    frame["scene"] = f"s{s:02d}-f{k}"
                labels["frames"].append(frame)
    (root / "labels.json").write_text(labels_text(labels), encoding="utf-8")
    return root


if __name__ == "__main__":  # python -m firmware_host.sim.conditions OUT [NAME...] [--scenes N] [--seed S]
    import argparse

    from firmware_host import data
    parser = argparse.ArgumentParser(prog="python -m firmware_host.sim.conditions")
    parser.add_argument("out")
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"conditions (all): {', '.join(CONDITIONS)}")
    parser.add_argument("--scenes", type=int, default=2, help="sequences of 10 frames per camera (2)")
    parser.add_argument("--seed", type=int, default=404, help="other scenes, same conditions (404)")
    parser.add_argument("--paired", action="store_true",
                        help="every camera films the whole table; frames of one moment share a scene (OUT/NAME-paired)")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in CONDITIONS]
    if unknown:
        parser.error(f"no condition {', '.join(unknown)} (known: {', '.join(CONDITIONS)})")
    with data.path(data.CAMERA_LAYOUT) as shipped:
        for condition in args.names or list(CONDITIONS):
            print(json.dumps({"condition": condition,
                              "set": str(write_condition_set(args.out, shipped, condition, scenes=args.scenes,
                                                                 seed=args.seed, paired=args.paired))}))
