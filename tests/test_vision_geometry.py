"""Table geometry: the zone layout, ArUco calibration on rendered pictures."""
import dataclasses
import json

import cv2
import numpy as np
import pytest

from calibration.geometry import (
    CalibrationError,
    Marker,
    calibrate_table,
    detect_markers,
    draw_calibration,
    intrusions,
    load_calibration,
    load_layout,
    out_of_view,
)
from firmware_host.cli.vision import expected_markers
from firmware_host.configfile import ConfigError
from firmware_host.sim.render import Scene, mount_camera, render

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
    for name in ("right", "left"):  # each camera has its colour reference card: greys and colours
        card = {p.name: p.srgb for p in layout.mount(name).patches}
        assert {"grey-75", "grey-45", "grey-20", "red", "green", "blue"} == set(card)


@pytest.mark.parametrize("old,new,key", [
    ('kind = "bet"', 'kind = "bets"', "zones[0].kind"),
    ("thickness_mm = 3.3", "thickness_mm = -3.3", "chip.thickness_mm"),
    ('dictionary = "DICT_4X4_50"', 'dictionary = "DICT_NOPE"', "aruco.dictionary"),
    ("polygon = [[-515, -365], [-345, -365], [-345, -235], [-515, -235]]",
     "polygon = [[-100, -200], [100, -200], [100, -100], [-100, -100]]", "overlaps zone"),
    ('"bet:5", "bet:6"', '"bet:4", "bet:6"', "already counted by camera right"),
    ('"bet:5", "bet:6"', '"bet:9", "bet:6"', "no zone 'bet:9'"),
    ('"bet:5", "bet:6"', '"bet:6"', "no camera counts zone(s) bet:5"),
    ("focal_px = 1325", "focal_px = -1", "cameras[0].focal_px"),
    ("position_mm = [700, -650, 400]", "position_mm = [700, -650]", "cameras[0].position_mm"),
    ("srgb = [175, 45, 40]", "srgb = [175, 45, 400]", "cameras[0].patches[3].srgb"),
    ('name = "grey-20"', 'name = ""', "cameras[0].patches[2].name"),
])
def test_a_bad_layout_names_the_bad_key(tmp_path, old, new, key):
    text = open(LAYOUT).read()
    assert old in text
    path = tmp_path / "bad.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_layout(path)
    assert key in str(err.value)


@pytest.mark.parametrize("camera", ["right", "left"])
def test_calibration_recovers_the_rendering_camera(tmp_path, camera):
    layout = load_layout(LAYOUT)
    image = cv2.imread(f"{DATA}/table_{camera}.jpg")
    calib = calibrate_table(image, layout, camera)
    truth = mount_camera(layout, camera)
    assert calib.layout.camera == camera and calib.layout.zones == layout.view(camera).zones
    assert list(calib.markers_seen) == expected_markers(layout, camera) and len(calib.markers_seen) >= 4
    assert calib.rms_px < 1.5
    assert abs(calib.camera.K[0, 0] - truth.K[0, 0]) / truth.K[0, 0] < 0.02
    assert np.linalg.norm(calib.camera.position() - truth.position()) < 30
    zone = calib.layout.zones[0]
    corners = np.array(zone.polygon)
    assert np.abs(calib.zone_pixels(zone) - truth.project(corners)).max() < 2.0
    assert intrusions(calib) == []  # no marker or patch where a stack of this camera's zones stands
    path = tmp_path / "table.json"
    calib.save(path)
    again = load_calibration(path)
    assert again.layout.camera == camera and again.layout.reference == calib.layout.reference
    assert np.allclose(again.camera.project(corners), calib.camera.project(corners))
    assert np.abs(again.empty.astype(int) - image.astype(int)).mean() < 1.0  # the empty table, as JPEG
    assert 0.5 < calib.blur_px < 1.0 and again.blur_px == calib.blur_px  # the renderer's lens, demosaic, JPEG
    picture = draw_calibration(image, calib)
    assert picture.shape == (720, 1280, 3) and (picture != image).any()


def test_a_damaged_empty_table_picture_is_a_clear_error_and_an_older_file_has_none(tmp_path):
    layout = load_layout(LAYOUT)
    calib = calibrate_table(cv2.imread(f"{DATA}/table_right.jpg"), layout, "right")
    path = tmp_path / "table.json"
    calib.save(path)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "empty": "not a picture"}))
    with pytest.raises(CalibrationError, match=r"table.json: empty: not a JPEG picture"):
        load_calibration(path)
    path.write_text(json.dumps({k: v for k, v in data.items() if k not in ("empty", "blur_px")}))
    older = load_calibration(path)
    assert older.empty is None and older.blur_px is None  # not measured: the side's blur rule is off


@pytest.mark.parametrize("sigma", [0.6, 1.0, 1.5, 2.0])
def test_a_cameras_blur_is_measured_on_its_markers_edges(sigma):
    """``calibration.sharpness``: a black square on white blurred by a Gaussian of *sigma* (drawn at 8 times
    the size and shrunk, so its edges are sharp to start with) measures sigma within 10 %, at a slant too;
    the committed table picture blurred so measures about its own blur and sigma together (in quadrature)."""
    from calibration.sharpness import marker_blur
    corners = np.array([[100.0, 130.0], [280.0, 100.0], [310.0, 280.0], [130.0, 310.0]])  # a slanted square
    big = np.full((3200, 3200), 235, np.uint8)
    cv2.fillConvexPoly(big, np.round(corners * 8).astype(np.int32), 20)
    small = cv2.resize(big, (400, 400), interpolation=cv2.INTER_AREA)  # each pixel a box: sigma 1 / sqrt(12)
    found = marker_blur([(cv2.GaussianBlur(small, (0, 0), sigma), [corners])])
    assert found == pytest.approx(float(np.hypot(sigma, 12 ** -0.5)), rel=0.1)
    layout = load_layout(LAYOUT)
    image = cv2.imread(f"{DATA}/table_right.jpg")
    own = calibrate_table(image, layout, "right").blur_px
    soft = calibrate_table(cv2.GaussianBlur(image, (0, 0), sigma), layout, "right").blur_px
    assert soft == pytest.approx(float(np.hypot(own, sigma)), rel=0.12)


def test_a_marker_behind_a_zone_is_found():
    layout = load_layout(LAYOUT)
    calib = calibrate_table(cv2.imread(f"{DATA}/table_right.jpg"), layout, "right")
    moved = dataclasses.replace(calib.layout, markers=calib.layout.markers + (Marker(9, -700, 320, 90),))
    assert ("bet:3", "marker 9") in intrusions(dataclasses.replace(calib, layout=moved))


def test_a_full_layout_needs_the_camera_named():
    with pytest.raises(ConfigError, match="name a camera: right, left"):
        calibrate_table(cv2.imread(f"{DATA}/table_right.jpg"), load_layout(LAYOUT))


def test_calibration_refuses_a_picture_without_markers():
    layout = load_layout(LAYOUT).view("right")
    picture = render(Scene(), layout, mount_camera(layout))
    picture[:] = cv2.GaussianBlur(picture, (0, 0), 25)  # markers unreadable
    with pytest.raises(CalibrationError, match="markers seen"):
        calibrate_table(picture, layout)


def test_markers_are_found_in_a_dim_warm_picture_through_equalisation():
    """A dim warm lamp leaves a marker's black and white a few grey levels apart: found once the
    picture is contrast-equalised (the plain detector finds one of five here), and the camera fits."""
    from firmware_host.sim.conditions import WARM
    from firmware_host.sim.render import HOUSE_004
    layout = load_layout("hardware/camera/table8.toml").view("right")
    dim = Scene(colours=HOUSE_004, light=(0.05, 0.07, 0.1), auto_exposure=False, noise=2.0, illuminant=WARM)
    picture = render(dim, layout, mount_camera(layout), seed=1)
    assert picture.mean() < 5
    plain = cv2.aruco.ArucoDetector(layout.aruco_dictionary(), cv2.aruco.DetectorParameters())
    ids = plain.detectMarkers(cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY))[1]
    assert ids is None or len(ids) < 3
    assert len(detect_markers(picture, layout)) == 5
    assert calibrate_table(picture, layout).rms_px < 2.0


def test_a_stacks_projection_finds_its_base_again_and_its_shadow_where_a_chip_hides():
    """``StackProjection`` (the counter's geometry, on the committed right camera's calibration): a stack's
    base found from the pixel of its base's lowest point is where it stands; its chips' rims climb the
    picture a chip at a time; the line from the camera over a stack's top meets the felt at its shadow's
    end (similar triangles, checked by projecting that point: it lies on the stack's top rim's far side)."""
    from firmware_host.vision.projection import StackProjection
    layout = load_layout(LAYOUT)
    geo = StackProjection(calibrate_table(cv2.imread(f"{DATA}/table_right.jpg"), layout, "right"))
    for x, y in ((-495.0, -244.0), (-260.0, 340.0), (-100.0, -150.0)):
        u, v = geo.base_pixel((x, y))
        assert np.allclose(geo.base(u, v), (x, y), atol=0.05)
        assert np.allclose(geo.rough_base(u, v), (x, y), atol=3.0)  # a chip's radius beyond the felt's pixel
        cols, rims = geo.rims(x, y, 5)
        steps = -np.diff(rims, axis=0)  # rows a chip climbs, bottom to top, per middle column
        assert rims.shape == (6, len(cols)) and (steps > 2.0).all() and (steps < 5.0).all()
        d = np.hypot(x - geo.cam_xy[0], y - geo.cam_xy[1])
        far = np.array([x, y]) + (np.array([x, y]) - geo.cam_xy) / d * (geo.r + geo.shadow(x, y, 12))
        on_felt = geo.cam.project(np.array([[*far, 0.0]]))[0]  # the shadow's end, seen from the camera...
        rim = np.array([x, y]) + (np.array([x, y]) - geo.cam_xy) / d * geo.r
        top = geo.cam.project(np.array([[*rim, 12 * geo.t]]))[0]  # ...is where the top's far rim is seen
        assert np.allclose(on_felt, top, atol=0.05)


def test_a_lens_applied_to_columns_and_rows_apart_is_the_lens_applied_to_points():
    """``CameraModel.distort_apart`` (the outlines of stacks through the lens, without copies) gives what
    ``distort`` gives, bit for bit, and what OpenCV's own model gives (its points projected back)."""
    camera = dataclasses.replace(mount_camera(load_layout(LAYOUT), "right"), dist=(-0.11, 0.03))
    rng = np.random.default_rng(5)
    u, v = rng.uniform(0, 1280, (7, 24)), rng.uniform(0, 720, (7, 24))
    du, dv = camera.distort_apart(u, v)
    assert du.shape == u.shape and np.array_equal(np.column_stack([du.ravel(), dv.ravel()]),
                                                  camera.distort(np.column_stack([u.ravel(), v.ravel()])))
    assert np.allclose(camera.undistort(np.column_stack([du.ravel(), dv.ravel()])),
                       np.column_stack([u.ravel(), v.ravel()]), atol=1e-3)
    flat = dataclasses.replace(camera, dist=(0.0, 0.0))
    assert all(a is b for a, b in zip(flat.distort_apart(u, v), (u, v)))  # a pinhole camera: as given


def posted(z: float, camera: str = "right"):
    """The shipped layout as *camera* sees it with both posts *z* mm high (aim and lens kept)."""
    layout = load_layout(LAYOUT)
    cameras = tuple(dataclasses.replace(c, position=(c.position[0], c.position[1], z)) for c in layout.cameras)
    return dataclasses.replace(layout, cameras=cameras).view(camera)


@pytest.mark.parametrize("camera", ["right", "left"])
def test_the_shipped_layout_holds_every_zone_and_patch_of_a_camera_whole(camera):
    """Each camera, calibrated on its committed picture, sees whole every stack its zones can hold (up to
    ``max_stack`` chips, from ``EDGE_MM`` inside a zone's edge: nearer it a stack is the dealer's call), its
    card areas, its white patch and its colour card. At the very edge only the pot's nearest corner
    reaches (by a few pixels) out of the right camera's picture: a stack there is cut (see test_vision_count)."""
    from firmware_host.vision.counter import EDGE_MM
    calib = calibrate_table(cv2.imread(f"{DATA}/table_{camera}.jpg"), load_layout(LAYOUT), camera)
    assert out_of_view(calib, EDGE_MM) == {}
    assert set(out_of_view(calib)) <= {"pot"} and all(px < 6 for px in out_of_view(calib).values())


def test_a_camera_posted_higher_leaves_part_of_the_pot_out_of_its_picture_and_says_so():
    """Posts 800 mm high with the same aim: the right camera looks down more steeply and the pot's near
    part falls below its picture (a stack of six there is not in the picture at all). Calibration finds the
    camera; what it cannot see is said, and those zones are never counted (test_vision_count)."""
    from firmware_host.vision.counter import EDGE_MM, out_of_picture
    layout = posted(800)
    calib = calibrate_table(render(Scene(), layout, mount_camera(layout), seed=1), layout)
    assert calib.rms_px < 1.0
    cut = out_of_view(calib, EDGE_MM)
    assert list(cut) == ["pot"] and cut["pot"] > 100
    said = out_of_picture(calib)
    assert len(said) == 1 and said[0].startswith("zone pot lies") and "never counted with confidence" in said[0]


def test_calibration_refuses_a_white_patch_out_of_the_picture():
    """Every colour is measured against the white patch: a layout that puts it where the camera does not
    look (here at its own post's foot) is refused at calibration, naming it."""
    layout = load_layout(LAYOUT)
    foot = ((640.0, -640.0), (700.0, -640.0), (700.0, -600.0), (640.0, -600.0))
    moved = dataclasses.replace(layout, cameras=tuple(dataclasses.replace(c, reference=foot) if c.name == "right"
                                                      else c for c in layout.cameras))
    with pytest.raises(CalibrationError, match="camera right's white reference patch lies .* out of its picture"):
        calibrate_table(cv2.imread(f"{DATA}/table_right.jpg"), moved, "right")
