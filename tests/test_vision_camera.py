"""The camera driver (replay of the committed clip) and the camera-fault monitor."""
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.geometry import calibrate_table, load_layout
from drivers.camera import open_device, open_replay
from firmware_host.observations import DeviceFault, DeviceRecovered
from firmware_host.vision import counter as vision
from firmware_host.vision import hiding, results
from firmware_host.vision.health import CameraHealth

DATA = Path("tests/data/vision")


def test_replay_gives_every_frame_with_its_time_and_closes():
    with open_replay(str(DATA / "clip_right.mp4"), start=100.0) as camera:
        frames = list(camera)
    assert len(frames) == 40
    assert [t for t, _ in frames[:3]] == [100.0, 100.1, 100.2]
    assert frames[0][1].shape == (720, 1280, 3)
    assert camera.closed
    with pytest.raises(RuntimeError):
        camera.read()


def test_replay_takes_given_times_and_refuses_a_missing_file(tmp_path):
    times = [float(k * k) for k in range(40)]
    with open_replay(str(DATA / "clip_right.mp4"), times=times) as camera:
        assert [camera.read()[0] for _ in range(3)] == [0.0, 1.0, 4.0]
    with pytest.raises(OSError):
        open_replay(str(tmp_path / "none.mp4"))


def test_a_missing_device_is_an_error_not_a_hang():
    with pytest.raises(OSError):
        open_device(97)


def test_the_committed_set_is_small_and_labelled():
    labels = json.loads((DATA / "labels.json").read_text())
    assert labels["format"] == "pokertable-vision-eval/1"
    assert len(labels["frames"]) == 160 and list(labels["calibration"]) == ["right", "left"]
    total = sum(p.stat().st_size for p in DATA.iterdir())
    assert total < 14 * 1024 * 1024
    first = cv2.imread(str(DATA / labels["frames"][0]["file"]))
    assert first.shape == (720, 1280, 3)
    assert any(z["covered"] for f in labels["frames"] for z in f["zones"].values())


@pytest.fixture(scope="module")
def health_counter():
    layout = load_layout("hardware/camera/table8.toml")
    calib = calibrate_table(cv2.imread(str(DATA / "table_right.jpg")), layout, "right")
    models = vision.learn_chips(calib, {v: cv2.imread(str(DATA / f"chips_right_{v}.jpg"))
                                        for v in (50, 100, 200, 500, 1000, 2000)})
    return vision.ChipCounter(calib, models)


def test_camera_faults_and_recovery(health_counter):
    frames = [f for _, f in open_replay(str(DATA / "clip_right.mp4"))]
    health = CameraHealth(health_counter, timeout=1.0, frozen=3)
    assert health.feed(0.0, frames[0]) == []
    assert health.feed(0.1, frames[1]) == []
    # frozen: the same frame again and again
    out = [health.feed(0.2 + k / 10, frames[1]) for k in range(3)]
    assert out[:2] == [[], []] and [o.fault for o in out[2]] == ["frozen-frames"]
    assert health.feed(0.6, frames[2]) == [DeviceRecovered(0.6, "camera", "frozen-frames cleared")]
    # no frames for longer than the timeout
    assert health.feed(1.0, None) == []
    fault = health.feed(1.7, None)
    assert fault and isinstance(fault[0], DeviceFault) and fault[0].fault == "no-frames"
    assert health.feed(1.8, frames[3]) == [DeviceRecovered(1.8, "camera", "no-frames cleared")]
    # the light goes: a fault once it has lasted 5 frames (an arm over the patch is not one)
    dark = [(frames[4 + k] * 0.1).astype(np.uint8) for k in range(6)]
    assert [health.feed(1.9, dark[0]), health.feed(1.95, frames[10])] == [[], []]  # a passing shadow
    out = [health.feed(2.0 + k / 100, dark[k]) for k in range(5)]
    assert out[:4] == [[]] * 4 and [o.fault for o in out[4]] == ["lost-light"]
    assert [type(o) for o in health.feed(2.1, frames[5])] == [DeviceRecovered]
    # focus lost: a strong blur, for 5 frames
    out = [health.feed(2.2 + k / 100, cv2.GaussianBlur(frames[11 + k], (0, 0), 6)) for k in range(5)]
    assert out[:4] == [[]] * 4 and [o.fault for o in out[4]] == ["lost-focus"]
    assert [type(o) for o in health.feed(2.3, frames[7])] == [DeviceRecovered]


def test_a_covered_reference_patch_makes_every_zone_unreadable(health_counter):
    """The colours are read against the white patch: an arm passing over it for a frame leaves the
    light of the frame before; covered longer, nothing can be trusted."""
    frame = next(iter(open_replay(str(DATA / "clip_right.mp4"))))[1]
    assert health_counter.light.reference_ok(frame)
    y0, y1, x0, x1 = health_counter.light.ref_box
    covered = frame.copy()
    covered[y0:(y0 + y1) // 2, x0:x1] = (90, 120, 170)  # a hand over half of it
    assert not health_counter.light.reference_ok(covered)
    passing = health_counter.count(covered, frame)
    assert passing.zones == health_counter.count(frame, frame).zones  # read with the light of a frame ago
    result = health_counter.count(covered, covered)
    assert {zc.status for zc in result.zones.values()} == {"occluded"}
    assert not any(c.present for c in result.cards.values())


def test_a_feed_turns_the_clip_into_observations(health_counter, monkeypatch):
    """The clip's changes are in bet:4 (eight 50s) and the pot, where a chip could lie hidden behind the
    stacks (``hiding.hidden_spot``): held still, they are left to the dealer (``unsure``), never
    reported; read as the picture shows them, they are reported once held for three frames."""
    from firmware_host.observations import ChipsInZone
    from firmware_host.vision.feed import CameraFeed, unsure

    def run():
        out, asked, why = [], set(), {}
        with open_replay(str(DATA / "clip_right.mp4")) as camera:
            feed = CameraFeed("right", camera, health_counter.calib, health_counter.models)
            for t in range(100, 160):
                out += feed.tick(float(t))
                asked |= feed.unsure()
                why.update(unsure([feed]))
        return asked, out, why
    asked, out, why = run()
    assert "bet:4" in asked and why["bet:4"] == results.WHY["behind"]  # the dealer is asked, and why
    assert not {o.zone for o in out if isinstance(o, ChipsInZone)} & {"bet:4", "pot"}
    faults = [o for o in out if isinstance(o, DeviceFault)]
    assert [f.fault for f in faults] == ["no-frames"]  # only once the clip has ended
    assert faults[0].t >= 100
    monkeypatch.setattr(hiding, "hidden_spot", lambda *args: None)
    asked, out, _ = run()
    chips = [o for o in out if isinstance(o, ChipsInZone)]
    assert {o.zone for o in chips} == {"bet:4", "pot"} and all(o.t >= 0.2 for o in chips)  # three frames held


def test_a_saturated_patch_is_reported_when_it_lasts(health_counter):
    """Exposure too long (auto exposure off): the white patch clips and bright chips lose their colour.
    The TD hears of it once it lasts."""
    frame = next(iter(open_replay(str(DATA / "clip_right.mp4"))))[1]
    bright = np.clip(frame.astype(np.float32) * 1.25, 0, 255).astype(np.uint8)  # the patch clips at 255
    health = CameraHealth(health_counter, frozen=100)
    out = [health.feed(k / 10, np.clip(bright.astype(np.int16) + k % 3, 0, 255).astype(np.uint8)) for k in range(5)]
    assert out[:4] == [[]] * 4 and [o.fault for o in out[4]] == ["overexposed"]
    assert [type(o) for o in health.feed(0.5, frame)] == [DeviceRecovered]


def test_a_camera_knocked_out_of_its_calibrated_pose_is_a_fault_and_counts_nothing(tmp_path):
    """The markers are checked against the calibration (every frame here, every 5 s by default):
    two checks finding them moved raise `moved`, and the camera reports no chips until a check
    finds them back in place; the chips it reported before are not reported twice."""
    from calibration.geometry import CameraModel
    from firmware_host.observations import ChipsInZone
    from firmware_host.sim.render import HOUSE_004, Scene, Stack, mount_camera, render
    from firmware_host.vision.feed import CameraFeed
    layout = load_layout("hardware/camera/table8.toml").view("right")
    calib = calibrate_table(cv2.imread(str(DATA / "table_right.jpg")), layout)
    models = vision.learn_chips(calib, {v: cv2.imread(str(DATA / f"chips_right_{v}.jpg")) for v in HOUSE_004})
    mount = layout.mount("right")
    knocked = CameraModel.looking_at(mount.position, np.add(mount.aim, (10.0, 0.0, 0.0)), mount.focal_px, mount.size)
    scene = Scene((Stack(-430, -300, 500, 4),), colours=HOUSE_004)
    still, moved = render(scene, layout, mount_camera(layout), seed=1), render(scene, layout, knocked, seed=1)
    video = tmp_path / "knocked.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (1280, 720))
    for frame in [still] * 4 + [moved] * 4 + [still] * 4:
        writer.write(frame)
    writer.release()
    with open_replay(str(video)) as camera:
        feed = CameraFeed("right", camera, calib, models)
        feed.health.pose_every = 0.0
        ticks = [feed.tick(float(k)) for k in range(12)]
    assert ChipsInZone(0.2, "bet:1", 2000, ((500, 4),)) in ticks[2]  # three still frames
    faults = [(k, o) for k, out in enumerate(ticks) for o in out if isinstance(o, (DeviceFault, DeviceRecovered))]
    assert [(k, type(o).__name__) for k, o in faults] == [(5, "DeviceFault"), (8, "DeviceRecovered")]
    assert faults[0][1].fault == "moved" and "calibrate the table again" in faults[0][1].detail
    assert not any(isinstance(o, ChipsInZone) for out in ticks[4:] for o in out)  # held, then the same chips
    assert feed.stability.state("bet:1") == "stable"


def test_a_camera_whose_focus_drifts_after_calibration_is_soft_and_reads_no_side(tmp_path):
    """The markers' blur is measured again at each pose check (every frame here, every 5 s by default):
    two checks over ``SOFT`` (1.3) times the calibration's raise `soft`, one within clears it; meanwhile
    the counter reads stacks' sides with the blur measured (a stack of four 500s is then uncertain: its
    rows are blurred into one another), and the same chips are not reported twice when it is sharp again."""
    from firmware_host.observations import ChipsInZone
    from firmware_host.sim.render import HOUSE_004, Scene, Stack, mount_camera, render
    from firmware_host.vision.feed import CameraFeed
    layout = load_layout("hardware/camera/table8.toml").view("right")
    calib = calibrate_table(cv2.imread(str(DATA / "table_right.jpg")), layout)
    models = vision.learn_chips(calib, {v: cv2.imread(str(DATA / f"chips_right_{v}.jpg")) for v in HOUSE_004})
    sharp = render(Scene((Stack(-430, -300, 500, 4),), colours=HOUSE_004), layout, mount_camera(layout), seed=1)
    soft = cv2.GaussianBlur(sharp, (0, 0), 1.6)
    video = tmp_path / "soft.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (1280, 720))
    for frame in [sharp] * 4 + [soft] * 5 + [sharp] * 4:
        writer.write(frame)
    writer.release()
    blurs = []
    with open_replay(str(video)) as camera:
        feed = CameraFeed("right", camera, calib, models)
        feed.health.pose_every = 0.0
        ticks = []
        for k in range(13):
            ticks.append(feed.tick(float(k)))
            blurs.append(feed.counter.sides.blur_px)
    assert ChipsInZone(0.2, "bet:1", 2000, ((500, 4),)) in ticks[2]
    faults = [(k, o) for k, out in enumerate(ticks) for o in out if isinstance(o, (DeviceFault, DeviceRecovered))]
    assert [(k, getattr(o, "fault", o.detail)) for k, o in faults] == [  # the coarser `lost-focus` (the
        (5, "soft"), (8, "lost-focus"), (9, "lost-focus cleared"), (9, "soft cleared")]  # patch's) after 5 frames
    assert "blur 1.6" in faults[0][1].detail and "refocus" in faults[0][1].detail
    assert all(b > 1.3 * calib.blur_px for b in blurs[4:9]) and blurs[3] == calib.blur_px == blurs[12]
    assert not any(isinstance(o, ChipsInZone) for out in ticks[3:] for o in out)
    assert feed.stability.state("bet:1") == "stable"
