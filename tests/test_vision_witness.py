"""A second view: the other dealer-corner camera's picture of the same moment shows where a chip could lie
hidden behind the pot's stacks from the camera that counts the pot (docs/vision.md, "A second view of a zone")."""
import dataclasses

import cv2
import pytest

from drivers.camera import open_replay
from firmware_host.observations import ChipsInZone
from firmware_host.sim.render import HOUSE_004, Arm, Scene, Stack, mount_camera, render
from firmware_host.vision import counter as vision
from firmware_host.vision import hiding
from firmware_host.vision.feed import TOGETHER_S, CameraFeed
from test_vision_count import installed

TALL = Stack(0, -150, 2000, 12)  # twelve 2000s in the pot: from the right camera a chip could hide behind them


@pytest.fixture(scope="module")
def right():
    return installed("right")  # counts the pot


@pytest.fixture(scope="module")
def left():
    return installed("left")  # sees the pot from the other corner


def pictures(right, left, stacks, arms_left=(), seed=1):
    """The same moment from both cameras (the whole table: every stack in both pictures)."""
    scene = Scene(tuple(stacks), colours=HOUSE_004)
    return (render(scene, right[0], mount_camera(right[0]), seed=seed),
            render(dataclasses.replace(scene, arms=tuple(arms_left)), left[0], mount_camera(left[0]), seed=seed + 1))


def test_the_other_camera_shows_the_felt_bare_behind_a_pot_stack_and_the_pot_is_counted(right, left):
    """From the right camera a chip could lie wholly hidden behind twelve 2000s in the pot: alone it leaves
    the pot uncertain (``behind``); the left camera's picture of the same moment shows every such place
    bare, so the pot is counted, and says so (``witnessed``)."""
    r, lf = pictures(right, left, [TALL])
    alone = right[3].count(r).zones["pot"]
    assert alone.status == "uncertain" and alone.why == ("behind",) and alone.amount == 24000, alone
    witness = left[3].witness(lf)
    assert witness is not None
    seen = right[3].count(r, witnesses=[witness]).zones["pot"]
    assert seen.status == "ok" and seen.witnessed and seen.chips == ((2000, 12),), seen


@pytest.mark.parametrize("value", sorted(HOUSE_004))
def test_a_chip_hidden_from_the_counting_camera_is_seen_by_the_other_and_the_pot_stays_uncertain(right, left,
                                                                                                  value):
    """A chip of any denomination at a place where the right camera cannot see it (one of
    ``hiding.hidden_spots``, a different one per denomination): read as before by the right camera, but the
    left camera's picture shows it, so the pot is never counted 24000 with confidence for 24000 + the chip."""
    roi = next(r for r in right[3].rois if r.zone.name == "pot")
    alone = right[3].count(pictures(right, left, [TALL])[0]).zones["pot"]
    spots = hiding.hidden_spots(right[3].geo, roi, [s for s in alone.stacks if s.count > 0])
    x, y = spots[sorted(HOUSE_004).index(value) * (len(spots) - 1) // (len(HOUSE_004) - 1)]
    r, lf = pictures(right, left, [TALL, Stack(round(float(x), 1), round(float(y), 1), value, 1)])
    blind = right[3].count(r).zones["pot"]
    assert blind.amount == 24000 and blind.behind, blind  # the chip shows nowhere in the right picture
    seen = right[3].count(r, witnesses=[left[3].witness(lf)]).zones["pot"]
    assert seen.status == "uncertain" and seen.behind and not seen.witnessed, seen


def test_an_arm_over_the_pot_in_the_other_picture_clears_nothing(right, left):
    r, lf = pictures(right, left, [TALL], arms_left=[Arm(-50, 800, -50, -110, height=40.0)])
    seen = right[3].count(r, witnesses=[left[3].witness(lf)]).zones["pot"]
    assert seen.status == "uncertain" and seen.behind and not seen.witnessed, seen


def test_a_zone_the_other_camera_does_not_see_is_not_witnessed(right, left):
    """bet:4 lies out of the left camera's picture: a chip hidden behind its stack stays the dealer's to look at."""
    r, lf = pictures(right, left, [Stack(-260, 340, 2000, 12)])
    seen = right[3].count(r, witnesses=[left[3].witness(lf)]).zones["bet:4"]
    assert seen.status == "uncertain" and seen.behind and not seen.witnessed, seen


def test_a_picture_is_no_witness_without_its_white_patch_or_an_empty_tables_picture(right, left):
    _, lf = pictures(right, left, [TALL])
    dealers = Arm(-50, -800, -50, -110, height=40.0)  # the dealer's arm, over the left camera's white patch
    _, covered = pictures(right, left, [TALL], arms_left=[dealers])
    counter = left[3]
    assert counter.witness(lf) is not None and counter.witness(covered) is None
    assert not counter.light.reference_ok(covered)  # no light to compare the empty table's picture with
    bare = vision.ChipCounter(dataclasses.replace(left[1], empty=None), left[2])
    assert bare.witness(lf) is None


def _video(path, frames):
    """*frames* as a Motion-JPEG clip (each frame a JPEG, as the counter's test pictures are)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (1280, 720))
    for frame in frames:
        writer.write(frame)
    writer.release()
    return str(path)


@pytest.mark.parametrize("apart", [0.02, 1.0])
def test_a_camera_feed_takes_the_other_cameras_frame_of_the_same_moment_as_a_second_view(right, left, tmp_path,
                                                                                       apart):
    """In service each camera's last frame is a second view for the others (``CameraFeed.others``): the pot
    is reported once the left camera's frame taken within ``TOGETHER_S`` shows bare felt behind the stack;
    a frame taken a second away is of another moment and shows nothing of this one."""
    r, lf = pictures(right, left, [TALL])
    times = [0.1 * k for k in range(5)]
    with open_replay(_video(tmp_path / "right.avi", [r] * 5), times=[t + apart for t in times]) as rc, \
            open_replay(_video(tmp_path / "left.avi", [lf] * 5), times=times) as lc:
        feeds = CameraFeed("right", rc, right[1], right[2]), CameraFeed("left", lc, left[1], left[2])
        feeds[0].others, feeds[1].others = [feeds[1]], [feeds[0]]
        out = []
        for t in times:
            out += feeds[1].tick(t) + feeds[0].tick(t + apart)
    pot = [o for o in out if isinstance(o, ChipsInZone) and o.zone == "pot"]
    if apart <= TOGETHER_S:
        assert [o.chips for o in pot] == [((2000, 12),)], out
    else:
        assert pot == [] and "pot" in feeds[0].unsure(), out
