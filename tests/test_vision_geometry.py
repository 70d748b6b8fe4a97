"""Table geometry: the zone layout, ArUco calibration on rendered pictures."""
import cv2
import numpy as np
import pytest

from calibration.geometry import (CalibrationError, LayoutError, calibrate_table, draw_calibration, load_calibration,
                                  load_layout)
from firmware_host.render import Scene, default_camera, render

LAYOUT = "hardware/camera/table8.toml"
DATA = "tests/data/vision"


def test_opencv_has_the_aruco_api_we_pin():
    major, minor = (int(x) for x in cv2.__version__.split(".")[:2])
    assert (major, minor) >= (4, 7)
    assert hasattr(cv2.aruco, "ArucoDetector")


def test_layout_has_the_zones_of_an_eight_seat_table():
    layout = load_layout(LAYOUT)
    names = {z.name for z in layout.zones}
    assert {f"bet:{n}" for n in range(1, 9)} | {f"seat:{n}" for n in range(1, 9)} | {"pot", "deck"} <= names
    assert {f"board:{n}" for n in range(1, 6)} <= names


@pytest.mark.parametrize("old,new,key", [
    ('kind = "bet"', 'kind = "bets"', "zones[0].kind"),
    ("thickness_mm = 3.3", "thickness_mm = -3.3", "chip.thickness_mm"),
    ('dictionary = "DICT_4X4_50"', 'dictionary = "DICT_NOPE"', "aruco.dictionary"),
    ("polygon = [[-515, -365], [-345, -365], [-345, -235], [-515, -235]]",
     "polygon = [[-100, -200], [100, -200], [100, -100], [-100, -100]]", "overlaps zone"),
])
def test_a_bad_layout_names_the_bad_key(tmp_path, old, new, key):
    text = open(LAYOUT).read()
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(LayoutError) as err:
        load_layout(path)
    assert key in str(err.value)


def test_calibration_recovers_the_rendering_camera(tmp_path):
    layout = load_layout(LAYOUT)
    calib = calibrate_table(cv2.imread(f"{DATA}/table.jpg"), layout)
    truth = default_camera()
    assert calib.markers_seen == tuple(m.id for m in layout.markers)
    assert calib.rms_px < 1.5
    assert abs(calib.camera.K[0, 0] - truth.K[0, 0]) / truth.K[0, 0] < 0.02
    assert np.linalg.norm(calib.camera.position() - truth.position()) < 30
    corners = np.array(layout.zone("bet:1").polygon)
    assert np.abs(calib.zone_pixels(layout.zone("bet:1")) - truth.project(corners)).max() < 2.0
    path = tmp_path / "table.json"
    calib.save(path)
    again = load_calibration(path)
    assert np.allclose(again.camera.project(corners), calib.camera.project(corners))
    picture = draw_calibration(cv2.imread(f"{DATA}/table.jpg"), calib)
    assert picture.shape == (720, 1280, 3) and (picture != cv2.imread(f"{DATA}/table.jpg")).any()


def test_calibration_refuses_a_picture_without_markers():
    layout = load_layout(LAYOUT)
    picture = render(Scene(), layout, default_camera())
    picture[:] = cv2.GaussianBlur(picture, (0, 0), 25)  # markers unreadable
    with pytest.raises(CalibrationError, match="markers seen"):
        calibrate_table(picture, layout)
