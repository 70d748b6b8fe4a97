"""Colour under a change of light, the lens, robust chip calibration: on rendered picture files."""
import dataclasses

import cv2
import numpy as np
import pytest

from calibration.chips import ColourModel, inliers, learn
from calibration.geometry import calibrate_table, load_layout
from calibration.mount import mount_camera
from firmware_host import data
from firmware_host.sim.conditions import write_condition_set
from firmware_host.sim.render import HOUSE_004, Scene, render
from firmware_host.vision.colour import CardReference, fit
from firmware_host.vision.evaluation import calibrate_camera, evaluate, load_set, read_picture
from firmware_host.vision.health import CameraHealth


@pytest.fixture(scope="module")
def layout_path():
    with data.path(data.CAMERA_LAYOUT) as path:
        yield path


@pytest.fixture(scope="module")
def sets(tmp_path_factory, layout_path):
    """Rendered sets (calibrated in the usual light) under another light, and the usual one."""
    out = tmp_path_factory.mktemp("conditions")
    return {name: load_set(write_condition_set(out, layout_path, name, scenes=1))
            for name in ("usual", "warm-dim", "harsh-light", "distortion")}


def test_a_correction_fitted_on_the_card_maps_a_lamp_and_a_tone_curve_back():
    reference = CardReference((220.0, 230.0, 232.0), {"grey-20": (48.0, 50.0, 51.0), "grey-45": (105.0, 111.0, 112.0),
                                                      "grey-75": (174.0, 184.0, 186.0), "red": (37.0, 43.0, 172.0),
                                                      "green": (64.0, 136.0, 59.0), "blue": (147.0, 63.0, 44.0)},
                              ("grey-20", "grey-45", "grey-75"))
    lamp = np.array([[0.55, 0.06, 0.0], [0.04, 0.85, 0.05], [0.0, 0.08, 1.15]])

    def seen(bgr):
        return 255 * (np.clip(lamp @ np.array(bgr), 0, None) / 255) ** 0.85 + 4

    measured = {n: seen(c) for n, c in reference.patches.items()} | {"white": seen(reference.white)}
    correction = fit(measured, reference)
    assert correction.relit() is None  # within the bounds: the fit is under RESIDUAL_MAX
    pixels = np.array([[measured[n] for n in reference.patches]], np.float32).round().astype(np.uint8)
    back = correction.apply(pixels).astype(float) / correction.scale
    assert np.abs(back - np.array([list(reference.patches.values())])).max() < 12
    harsh = fit({n: np.array(c) * (0.3, 0.75, 1.3) for n, c in measured.items()}, reference)
    assert harsh.relit() and "light colour" in harsh.relit()
    dark = fit({n: np.array(c) * 0.2 for n, c in measured.items()}, reference)
    assert "light level" in dark.relit()


def test_a_card_lit_unevenly_in_the_calibrations_light_is_no_change_of_light():
    """A spot across the card (its colours 15 % brighter than its greys) fits to 3 % with the light's
    colour unmoved: no correction to trust, but no relit either (the white patch alone reads the
    frame); 20 % brighter is beyond what unevenness explains: relit."""
    reference = CardReference((220.0, 230.0, 232.0), {"grey-20": (48.0, 50.0, 51.0), "grey-45": (105.0, 111.0, 112.0),
                                                      "grey-75": (174.0, 184.0, 186.0), "red": (37.0, 43.0, 172.0),
                                                      "green": (64.0, 136.0, 59.0), "blue": (147.0, 63.0, 44.0)},
                              ("grey-20", "grey-45", "grey-75"))

    def spot(gain):
        lit = {n: np.array(c) * (gain if n in ("red", "green", "blue") else 1.0) for n, c in reference.patches.items()}
        return fit(lit | {"white": np.array(reference.white)}, reference)
    assert spot(1.15).uneven() and spot(1.15).relit() is None and 0.025 < spot(1.15).residual < 0.04
    assert not spot(1.2).uneven() and "fits the calibration's light only" in spot(1.2).relit()


@pytest.mark.parametrize("name", ["usual", "warm-dim"])
def test_another_light_after_calibration_is_counted_never_wrong(sets, name):
    figures = evaluate(sets[name])
    assert all(c["colour_card"] for c in figures["calibration"].values())
    assert figures["wrong_share"] == 0 and figures["covered_wrong"] == 0 and figures["stable_wrong"] == 0
    # read right: exact, or uncertain only because a chip could lie hidden behind a stack (measured: 94 % and 83 %)
    assert figures["exact_share"] + figures["behind_right_share"] >= (0.9 if name == "usual" else 0.8)


def test_the_same_warm_light_read_through_the_white_patch_alone_does_worse(sets):
    """Without the card (the counter as it was) the warm, dim light loses counts: what the card buys."""
    warm = sets["warm-dim"]
    figures = evaluate(warm)
    with_card = figures["exact_share"] + figures["behind_right_share"]  # read right (a chip could hide: uncertain)
    calibrated = calibrate_camera(warm.layout, "right", warm.calibration["right"])
    plain = dataclasses.replace(calibrated.counter.models, card=None)
    from firmware_host.vision.counter import ChipCounter
    counters = {"with": calibrated.counter, "without": ChipCounter(calibrated.counter.calib, plain)}
    exact = {k: 0 for k in counters}
    frames = [f for f in warm.frames if f.camera == "right"]
    for frame in frames:
        image = read_picture(frame.file)
        for key, counter in counters.items():
            result = counter.count(image)
            exact[key] += sum((result.zones[z].status == "ok" or result.zones[z].behind)
                              and result.zones[z].amount == t.amount for z, t in frame.zones.items() if not t.covered)
    assert exact["with"] > exact["without"] and with_card > 0.8


def test_a_light_beyond_the_calibration_raises_relit_and_leaves_the_zones_uncertain(sets):
    harsh = sets["harsh-light"]
    figures = evaluate(harsh)
    assert figures["wrong_share"] == 0 and figures["uncertain_share"] == 1.0 and figures["stable"] == 0
    counter = calibrate_camera(harsh.layout, "right", harsh.calibration["right"]).counter
    health = CameraHealth(counter, persist=3)
    frames = [read_picture(f.file) for f in harsh.frames if f.camera == "right"][:4]
    out = [health.feed(0.1 * k, frame) for k, frame in enumerate(frames)]
    assert out[:2] == [[], []] and "relit" in [o.fault for o in out[2]]
    relit = next(o for o in out[2] if o.fault == "relit")
    assert "light colour" in relit.detail and "calibrate chips in this light" in relit.detail
    usual = sets["usual"]
    calm = CameraHealth(calibrate_camera(usual.layout, "right", usual.calibration["right"]).counter, persist=3)
    assert [calm.feed(0.1 * k, read_picture(f.file)) for k, f in enumerate(usual.frames[:4])] == [[]] * 4


def test_a_hand_over_the_colour_card_is_occlusion_not_a_change_of_light(sets, layout_path):
    usual = sets["usual"]
    counter = calibrate_camera(usual.layout, "right", usual.calibration["right"]).counter
    view = load_layout(layout_path).view("right")
    image = render(Scene(colours=HOUSE_004), view, mount_camera(view), seed=3)
    assert counter.light.card_colours(image) is not None
    fingers = counter.cam.project(np.array(view.mount().patches[0].polygon))  # a hand over half the first patch
    cv2.fillConvexPoly(image, np.round(fingers[:3]).astype(np.int32), (120, 150, 200))
    assert counter.light.card_colours(image) is None and counter.light.relit(image) is None
    assert {z.status for z in counter.count(image).zones.values()} == {"occluded"}


def test_the_lens_is_fitted_where_a_pinhole_cannot_fit(sets, layout_path):
    view = load_layout(layout_path).view("right")
    lens = dataclasses.replace(mount_camera(view), dist=(-0.12, 0.03))
    picture = render(Scene(colours=HOUSE_004), view, lens, seed=1)
    calib = calibrate_table(picture, view, "right")
    assert calib.camera.distorted and abs(calib.camera.dist[0] + 0.11) < 0.03 and calib.rms_px < 1.5
    pinhole = calibrate_table(picture, view, "right", max_rms_px=100, lens=False)
    assert pinhole.rms_px > max(1.5, 2 * calib.rms_px)  # a pinhole cannot explain the corners (1.9 px here)
    assert calib.camera.to_dict()["dist"] == list(calib.camera.dist)
    flat = calibrate_table(render(Scene(colours=HOUSE_004), view, mount_camera(view), seed=1), view, "right")
    assert not flat.camera.distorted  # no lens fitted into a camera that has none
    figures = evaluate(sets["distortion"])
    assert figures["wrong_share"] == 0 and figures["exact_share"] + figures["behind_right_share"] >= 0.9  # 94 %
    assert all(c["distortion"][0] < -0.05 for c in figures["calibration"].values())


def test_a_saved_calibration_from_before_the_lens_fit_is_a_pinhole(tmp_path, layout_path):
    from calibration.geometry import load_calibration
    view = load_layout(layout_path).view("left")
    calib = calibrate_table(render(Scene(colours=HOUSE_004), view, mount_camera(view), seed=1), view, "left")
    saved = calib.to_dict()
    del saved["camera"]["dist"]
    path = tmp_path / "old.json"
    import json
    path.write_text(json.dumps(saved))
    assert load_calibration(path).camera.dist == (0.0, 0.0)


def test_an_outlier_chip_is_left_out_instead_of_refusing_the_set():
    rng = np.random.default_rng(5)
    grey = rng.normal((0.333, 0.333, 0.6), (0.004, 0.004, 0.02), (12, 3))
    pink = rng.normal((0.36, 0.25, 0.75), (0.004, 0.004, 0.02), (12, 3))
    greenish = np.vstack([grey, [[0.30, 0.37, 0.58]]])  # one far chip of the grey picture read greenish
    assert inliers(greenish).tolist() == [True] * 12 + [False]
    felt = ColourModel((0.26, 0.6, 0.25), (0.012, 0.012, 0.04))
    models = learn({50: greenish, 2000: pink}, felt)
    assert models.left_out == {50: 1, 2000: 0}
    assert models.chips[50].spread[1] < 0.01  # the grey model was not widened by it


def test_each_denominations_edge_bias_and_how_far_its_single_chips_stray_from_it():
    """The median of a denomination's single chips' silhouette excess is its edge bias; their robust standard
    deviation (1.4826 median absolute deviations, not moved by one chip far off) is what that bias leaves
    uncertain in a stack's height; from fewer than three chips, none (the chip set's largest stands in)."""
    felt = ColourModel((0.26, 0.6, 0.25), (0.012, 0.012, 0.04))
    grey = np.tile((0.333, 0.333, 0.6), (6, 1))
    pink = np.tile((0.36, 0.25, 0.75), (6, 1))
    blue = np.tile((0.5, 0.2, 0.5), (6, 1))
    excess = {50: [0.4, 0.5, 0.6, 0.5, 0.45, 9.0], 2000: [-1.0, 0.5, 2.0, -0.5, 1.0, 1.5], 500: [0.3, 0.3]}
    models = learn({50: grey, 2000: pink, 500: blue}, felt, excess)
    assert models.edge_bias == {50: 0.5, 2000: 0.75, 500: 0.3}
    assert models.edge_spread[50] == pytest.approx(1.4826 * 0.075, abs=1e-3)  # the chip 9 px off moves it little
    assert models.edge_spread[2000] == pytest.approx(1.4826 * 1.0, abs=1e-3)
    assert 500 not in models.edge_spread and models.spread(500) == models.edge_spread[2000]


def test_calibrate_chips_says_which_chips_it_left_out(tmp_path, layout_path):
    """A 2000 chip lying among the 50s of the 50 picture: left out and said, the set still learnt."""
    from firmware_host.sim.render import Stack, calibration_shows
    view = load_layout(layout_path).view("left")
    camera = mount_camera(view)
    table = tmp_path / "table.json"
    calibrate_table(render(Scene(colours=HOUSE_004), view, camera, seed=1), view, "left").save(table)
    shows = calibration_shows(view, HOUSE_004)
    odd = shows[50].stacks[0]
    shows[50] = dataclasses.replace(shows[50], stacks=(Stack(odd.x, odd.y, 2000, 1),) + shows[50].stacks[1:])
    args = []
    for value, scene in shows.items():
        cv2.imwrite(str(tmp_path / f"{value}.png"), render(scene, view, camera, seed=value))
        args += ["--show", f"{value}={tmp_path / f'{value}.png'}"]
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "calibrate", "chips", "--table", str(table),
                           *args, "--out", str(tmp_path / "chips.json"), "--picture", str(tmp_path / "c.jpg")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "   50: 1 chip(s) left out of its colour model" in done.stdout
    assert "colour card: seen" in done.stdout


def test_a_felt_coloured_chip_under_a_stack_is_seen_by_what_shows_under_its_base(tmp_path, layout_path, monkeypatch):
    """The renderer's ``mixed`` condition: a green 200 on the green felt under a pink 2000 (left camera,
    bet:7) is lost to the edges, which measure one 2000 (1.16 chips high, confident); what shows of it
    is its white edge spots under the base, 0.29 of the middle columns. ``BASE_COVERED`` (0.25) makes the
    stack uncertain; at 0.3 it was read 2000 for 2200 (cost on the 68 evaluations: -0.09 points on average,
    the renderer's ``dim`` and ``blur`` -1.7; nothing on the 84 held-out ones)."""
    from firmware_host.vision import stack
    mixed = load_set(write_condition_set(tmp_path, layout_path, "mixed", scenes=1))
    assert evaluate(mixed)["wrong_share"] == 0
    monkeypatch.setattr(stack, "BASE_COVERED", 0.3)
    assert evaluate(mixed)["wrong_share"] > 0


def test_the_behind_condition_sets_chips_touching_stacks_behind_them_as_the_camera_sees_them(layout_path):
    """``behind`` (``python -m firmware_host.sim.conditions``): one chip or two touching a stack behind
    it, within ``BEHIND_OFF`` of the camera's line of sight, in the stack's zone; drawn from the
    stack's place, so a scene's frames keep them."""
    import math

    from firmware_host.sim.conditions import BEHIND_OFF, CONDITIONS, _behind
    from firmware_host.sim.render import random_scene
    layout = load_layout(layout_path).view("right")
    camera = mount_camera(layout)
    eye = camera.position()[:2]
    rng = np.random.default_rng(5)
    added = 0
    for _ in range(12):
        scene = random_scene(rng, layout, HOUSE_004, camera=camera)
        after = _behind(scene, CONDITIONS["behind"].behind, layout, camera)
        assert after.stacks[:len(scene.stacks)] == scene.stacks and _behind(scene, 0.7, layout, camera) == after
        assert _behind(scene, 0.0, layout, camera) == scene
        for chip in after.stacks[len(scene.stacks):]:
            added += 1
            assert 1 <= chip.count <= 2
            front = min(scene.stacks, key=lambda s: math.hypot(s.x - chip.x, s.y - chip.y))
            assert front.count >= 2 and abs(math.hypot(front.x - chip.x, front.y - chip.y) - 39.3) < 0.2
            sight = math.degrees(math.atan2(front.y - eye[1], front.x - eye[0]))
            off = math.degrees(math.atan2(chip.y - front.y, chip.x - front.x)) - sight
            assert abs((off + 180) % 360 - 180) <= BEHIND_OFF + 0.5
            zone = next(z for z in layout.zones if z.kind in ("bet", "pot") and z.contains(front.x, front.y))
            assert zone.contains(chip.x, chip.y)
            assert all(math.hypot(o.x - chip.x, o.y - chip.y) >= 39.2 for o in after.stacks if o is not chip)
    assert added >= 10


def test_the_tall_condition_draws_stacks_up_to_the_layouts_max_stack(layout_path):
    """``tall`` (``python -m firmware_host.sim.conditions``, ``physical --tall``): stacks of 8 chips to the
    layout's ``max_stack`` (20: a casino's full stacks), which the usual scenes (``1 + geometric(0.25)``,
    at most 12) almost never hold."""
    from firmware_host.sim.conditions import CONDITIONS
    from firmware_host.sim.physical import SESSIONS
    from firmware_host.sim.render import random_scene
    layout = load_layout(layout_path).view("right")
    rng = np.random.default_rng(3)
    counts = [s.count for _ in range(12) for s in random_scene(rng, layout, HOUSE_004, tall=True).stacks]
    assert min(counts) >= 8 and max(counts) == layout.max_stack == 20 and len(counts) >= 20
    assert max(s.count for _ in range(12) for s in random_scene(rng, layout, HOUSE_004).stacks) <= 12
    assert CONDITIONS["tall"].tall and CONDITIONS["spots-tall"].tall and not CONDITIONS["spots"].tall
    assert "tall" in dataclasses.replace(SESSIONS["spots-green"], tall=True).tags


def test_a_paired_set_films_each_moment_of_the_whole_table_from_both_cameras(tmp_path, layout_path):
    """``python -m firmware_host.sim.conditions OUT NAME --paired``: every camera films the whole table (each
    camera's scenes together), each frame labelled with its moment (``scene``) and only its own zones; counted
    with the other camera's frame as a second view, none wrong (seed 505, 4 scenes: 72.8 % exact against
    68.0 % without the second view, the pot's ``behind`` given back where the left camera shows it bare)."""
    from firmware_host.vision.evaluation import evaluate
    paired = load_set(write_condition_set(tmp_path, layout_path, "usual", scenes=1, seed=505, paired=True))
    moments: dict[str, list[str]] = {}
    for frame in paired.frames:
        moments.setdefault(frame.scene, []).append(frame.camera)
        assert set(frame.zones) == set(paired.layout.mount(frame.camera).zones) & {
            z.name for z in paired.layout.zones if z.kind in ("bet", "pot")}
    assert len(moments) == 10 and all(sorted(cameras) == ["left", "right"] for cameras in moments.values())
    figures = evaluate(paired)
    assert figures["wrong_share"] == 0 and figures["witnessed_wrong"] == 0 and figures["stacks_wrong"] == 0


def test_stacks_to_the_layouts_max_stack_are_counted_with_none_wrong(tmp_path, layout_path):
    """The renderer's ``tall`` condition (one scene a camera, stacks of 8 to 20 chips): none counted wrong,
    and stacks of 16 chips or more counted with confidence (measured, seed 491, 2 scenes: 62.0 % exact,
    33.3 % uncertain, all of it ``behind``; 111 stacks counted, none wrong)."""
    from firmware_host.vision.evaluation import calibrate_cameras
    from firmware_host.vision.results import MIN_CONFIDENCE
    tall = load_set(write_condition_set(tmp_path, layout_path, "tall", scenes=1, seed=491))
    cameras, tallest = calibrate_cameras(tall), 0
    figures = evaluate(tall, calibrated=cameras)
    assert figures["wrong_share"] == 0 and figures["stacks_wrong"] == 0
    assert figures["exact_share"] > 0.4
    for frame in tall.frames:
        result = cameras[frame.camera].counter.count(read_picture(frame.file))
        for name, truth in frame.zones.items():
            labelled = {(round(x), round(y)): len(chips) for (x, y), chips in zip(truth.at or (), truth.stacks)}
            for seen in result.zones[name].stacks:
                near = [n for (x, y), n in labelled.items() if abs(seen.x - x) < 5 and abs(seen.y - y) < 5]
                if near and seen.confidence >= MIN_CONFIDENCE and seen.count == near[0]:
                    tallest = max(tallest, seen.count)
    assert tallest >= 16
