"""Where a chip could hide from every camera (``firmware_host.sim.views``): the geometry behind the
counter's ``behind`` (docs/vision.md, "What a second view of each zone would give")."""
from __future__ import annotations

import json

import numpy as np
import pytest

from calibration.geometry import CameraModel, load_layout
from calibration.mount import mount_camera
from firmware_host.sim import views
from firmware_host.vision.projection import StackProjection

LAYOUT = load_layout("hardware/camera/table8.toml")


def _shipped() -> dict[str, StackProjection]:
    return {m.name: views.camera(LAYOUT, mount_camera(LAYOUT, m.name), m.size) for m in LAYOUT.cameras}


def _behind(geo: StackProjection, x: float, y: float) -> tuple[float, float]:
    """Where a chip touching the stack at (x, y) lies right behind it along the camera's line of sight."""
    d = np.array([x, y]) - geo.cam_xy
    far = np.array([x, y]) + LAYOUT.chip_diameter * d / np.linalg.norm(d)
    return float(far[0]), float(far[1])


def test_a_chip_right_behind_a_tall_stack_is_hidden_from_its_camera_and_seen_from_a_second_one() -> None:
    cameras = _shipped()
    right = cameras["right"]
    centre = np.array(LAYOUT.zone("bet:4").polygon).mean(0)
    stack = [(float(centre[0]), float(centre[1]), 10)]
    spot = _behind(right, *stack[0][:2])
    assert views.hidden(right, stack, *spot)
    assert not views.hidden(right, [(*stack[0][:2], 1)], *spot)  # one chip hides none behind it
    assert not views.holds(cameras["left"], *spot)  # the shipped left camera looks at the other half
    second = views.camera(LAYOUT, CameraModel.looking_at((-700, -650, 400), (-550, -50, 0), 900, (1280, 720)),
                          (1280, 720))
    assert views.holds(second, *spot) and not views.hidden(second, stack, *spot)

    alone = views.hiding(LAYOUT, cameras, [("bet:4", stack)])
    assert (alone.one["bet:4"], alone.every["bet:4"]) == (1, 1)
    both = views.hiding(LAYOUT, cameras | {"left2": second}, [("bet:4", stack), ("bet:4", [(*stack[0][:2], 1)])])
    assert both.scenes == 2 and (both.one["bet:4"], both.every["bet:4"]) == (1, 0)


def test_the_committed_sets_pot_is_seen_behind_its_stacks_by_the_other_camera(capsys) -> None:
    assert views.main(["tests/data/vision"]) == 0
    out = capsys.readouterr().out.splitlines()
    figures = json.loads(out[-1])
    assert figures["scenes"] > 40
    one, every = figures["per_zone"]["pot"]
    assert one > 0 and every == 0  # the left camera's picture holds the pot: no chip hides from both
    bets = {z: v for z, v in figures["per_zone"].items() if z.startswith("bet:")}
    assert bets and all(a == b for a, b in bets.values())  # no other camera holds a bet zone's spots
    assert out[1].startswith("a chip could hide from the counting camera:")


def test_a_malformed_extra_camera_is_one_clear_error(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        views.main(["tests/data/vision", "--extra", "left2:-700,-650:0,0,0"])
    assert stop.value.code == 2
    assert "expected NAME:X,Y,Z:AX,AY,AZ[:FOCAL]" in capsys.readouterr().err
