"""Table geometry: the zone layout in table millimetres and the camera that sees it.

Table frame: origin at the centre of the felt, x to the dealer's right, y away
from the dealer, z up, in millimetres. ArUco markers printed at known places on
the felt (``hardware/camera/*.toml``) give the camera's pose: with the principal
point at the image centre and square pixels, one view of the coplanar marker
corners fixes the focal length, the rotation and the translation. From there a
zone (a polygon on the felt) maps into the image by the homography, and a point
above the felt (the top of a stack) by the full projection.

Pinned: OpenCV >= 4.7 (``cv2.aruco.ArucoDetector``); tested with 5.0.0.
"""
from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.sharpness import marker_blur
from firmware_host.configfile import ConfigError, Section, read_toml

__all__ = [
    "CalibrationError", "CameraModel", "CameraMount", "Layout", "Marker", "TableCalibration", "Zone",
    "calibrate_table", "detect_markers", "draw_calibration", "intrusions", "load_calibration", "load_layout",
    "out_of_view",
]

ZONE_KINDS = ("bet", "pot", "cards")


class CalibrationError(RuntimeError):
    """The picture cannot calibrate the table (markers missing, bad fit)."""


@dataclass(frozen=True)
class Marker:
    """An ArUco marker on the felt: its id, centre and side in mm (top edge towards +y)."""

    id: int
    x: float
    y: float
    size: float

    def corners(self) -> np.ndarray:
        """Table coordinates of the corners in ArUco order: top-left, top-right, bottom-right, bottom-left."""
        h = self.size / 2
        return np.array([[self.x - h, self.y + h], [self.x + h, self.y + h],
                         [self.x + h, self.y - h], [self.x - h, self.y - h]], np.float64)


@dataclass(frozen=True)
class Zone:
    """A zone on the felt: ``bet:N``, ``pot``, ``seat:N`` card area, ``board:N`` spot, ``deck``."""

    name: str
    kind: str
    polygon: tuple[tuple[float, float], ...]

    def contains(self, x: float, y: float) -> bool:
        return self.inside(x, y) >= 0

    def inside(self, x: float, y: float) -> float:
        """How far (mm) the point is inside the zone's edge (negative: outside)."""
        poly = np.array(self.polygon, np.float32)
        return float(cv2.pointPolygonTest(poly, (float(x), float(y)), True))


@dataclass(frozen=True)
class Patch:
    """A patch of a camera's colour reference card on the felt: its outline (mm) and its printed
    colour (sRGB, 0-255, as measured under daylight), for a colour correction fitted per frame."""

    name: str
    polygon: tuple[tuple[float, float], ...]
    srgb: tuple[int, int, int]


@dataclass(frozen=True)
class CameraMount:
    """A chip camera as installed: its name, nominal pose and lens, its white reference
    patch on the felt and the zones it counts (each zone is counted by exactly one camera).

    The pose is nominal (the mount drawing, and the renderer's camera): ``calibrate table``
    measures the real one from the markers.
    """

    name: str
    position: tuple[float, float, float]
    aim: tuple[float, float, float]
    focal_px: float
    size: tuple[int, int]
    reference: tuple[tuple[float, float], ...]
    zones: tuple[str, ...]
    patches: tuple[Patch, ...] = ()  # the colour reference card beside the white patch


@dataclass(frozen=True)
class Layout:
    """The table as the cameras know it: felt, chip size, markers, cameras, zones.

    A *view* (:meth:`view`) is the layout as one camera sees it: only its zones, its
    reference patch in ``reference``; the full layout has every zone and ``reference`` None.
    """

    name: str
    width: float
    depth: float
    corner_radius: float
    chip_diameter: float
    chip_thickness: float
    max_stack: int
    dictionary: str
    reference: tuple[tuple[float, float], ...] | None
    markers: tuple[Marker, ...]
    zones: tuple[Zone, ...]
    source: dict
    cameras: tuple[CameraMount, ...] = ()
    camera: str | None = None  # the camera of a view
    elsewhere: tuple[Zone, ...] = ()  # a view: the zones the other cameras count

    def mount(self, name: str | None = None) -> CameraMount:
        """The camera *name* (or, when None, the view's camera or the only one)."""
        name = name or self.camera
        if name is None:
            if len(self.cameras) == 1:
                return self.cameras[0]
            raise ConfigError(self.name or "<layout>", "cameras",
                              f"name a camera: {', '.join(c.name for c in self.cameras)}")
        for mount in self.cameras:
            if mount.name == name:
                return mount
        raise ConfigError(self.name or "<layout>", "cameras",
                          f"no camera {name!r} (cameras: {', '.join(c.name for c in self.cameras)})")

    def view(self, name: str | None = None) -> Layout:
        """The layout as camera *name* sees it: its zones and its reference patch."""
        mount = self.mount(name)
        every = self.zones + self.elsewhere
        zones = tuple(z for z in every if z.name in mount.zones)
        elsewhere = tuple(z for z in every if z.name not in mount.zones)
        return dataclasses.replace(self, zones=zones, reference=mount.reference, camera=mount.name,
                                   elsewhere=elsewhere)

    def zone(self, name: str) -> Zone:
        for zone in self.zones:
            if zone.name == name:
                return zone
        raise KeyError(name)

    def aruco_dictionary(self) -> cv2.aruco.Dictionary:
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))


def _polygon(section: Section, name: str) -> tuple[tuple[float, float], ...]:
    value = section.get_list(name, item=_is_point, what="a list of [x, y] points in mm")
    if len(value) < 3:
        raise section.error(name, f"a polygon needs at least 3 points, not {len(value)}")
    return tuple((float(x), float(y)) for x, y in value)


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def _is_point(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(map(_is_number, value))


def _triple(section: Section, name: str) -> tuple[float, float, float]:
    x, y, z = section.get_list(name, item=_is_number, what="[x, y, z] in mm", length=3)
    return float(x), float(y), float(z)


def parse_layout(data: dict, file: str = "<layout>") -> Layout:
    """Check and build a :class:`Layout` from its TOML data; errors name the bad key."""
    top = Section(data, file)
    table, chip = top.section("table"), top.section("chip")
    dictionary = top.section("aruco").get_str("dictionary")
    if not hasattr(cv2.aruco, dictionary):
        raise ConfigError(file, "aruco.dictionary", f"not an OpenCV ArUco dictionary: {dictionary!r}")
    markers = tuple(_marker(m) for m in top.sections("markers"))
    if len({m.id for m in markers}) != len(markers):
        raise top.error("markers", "marker ids must be unique")
    if len(markers) < 4:
        raise top.error("markers", f"at least 4 markers are needed, not {len(markers)}")
    zones = tuple(_zone(z) for z in top.sections("zones"))
    if len({z.name for z in zones}) != len(zones):
        raise top.error("zones", "zone names must be unique")
    layout = Layout(
        name=table.get_str("name", ""),
        width=table.get_float("width_mm", above=0), depth=table.get_float("depth_mm", above=0),
        corner_radius=table.get_float("corner_radius_mm", minval=0),
        chip_diameter=chip.get_float("diameter_mm", above=0), chip_thickness=chip.get_float("thickness_mm", above=0),
        max_stack=chip.get_int("max_stack", minval=1),
        dictionary=dictionary, reference=None, markers=markers, zones=zones, source=data,
        cameras=_cameras(top, zones),
    )
    top.finish()
    _check_overlaps(file, layout)
    return layout


def _marker(m: Section) -> Marker:
    return Marker(m.get_int("id", minval=0), m.get_float("x_mm"), m.get_float("y_mm"), m.get_float("size_mm", above=0))


def _zone(z: Section) -> Zone:
    name, kind = z.get_str("name", nonempty=True), z.get_str("kind", choices=ZONE_KINDS)
    if kind == "bet" and not (name.startswith("bet:") and name[4:].isdigit()):
        raise z.error("name", f"a bet zone is named bet:N, not {name!r}")
    if kind == "pot" and name != "pot":
        raise z.error("name", f"the pot zone is named pot, not {name!r}")
    return Zone(name, kind, _polygon(z, "polygon"))


def _patch(p: Section) -> Patch:
    srgb = p.get_list("srgb", item=lambda v: type(v) is int and 0 <= v <= 255, length=3,
                      what="[r, g, b], each 0-255")
    return Patch(p.get_str("name", nonempty=True), _polygon(p, "polygon"), (srgb[0], srgb[1], srgb[2]))


def _cameras(top: Section, zones: tuple[Zone, ...]) -> tuple[CameraMount, ...]:
    """The ``[[cameras]]``: every chip and card zone is counted by exactly one of them."""
    sections = top.sections("cameras")
    if not sections:
        raise top.error("cameras", "at least one [[cameras]] is needed")
    mounts: list[CameraMount] = []
    owner: dict[str, str] = {}
    names = {z.name for z in zones}
    for c in sections:
        name = c.get_str("name", nonempty=True)
        width, height = c.get_list("size_px", [1280, 720], length=2, what="[width, height] in pixels",
                                   item=lambda v: type(v) is int and v > 0)
        listed = c.get_list("zones", item=lambda v: isinstance(v, str), what="a list of zone names")
        if not listed:
            raise c.error("zones", "expected a list of zone names")
        for zone in listed:
            if zone not in names:
                raise c.error("zones", f"no zone {zone!r}")
            if zone in owner:
                raise c.error("zones", f"zone {zone} is already counted by camera {owner[zone]}")
            owner[zone] = name
        mounts.append(CameraMount(name, _triple(c, "position_mm"), _triple(c, "aim_mm"),
                                  c.get_float("focal_px", above=0), (width, height), _polygon(c, "reference"),
                                  tuple(listed), tuple(_patch(p) for p in c.sections("patches", required=False))))
    if len({m.name for m in mounts}) != len(mounts):
        raise top.error("cameras", "camera names must be unique")
    unseen = sorted(names - set(owner))
    if unseen:
        raise top.error("cameras", f"no camera counts zone(s) {', '.join(unseen)}")
    return tuple(mounts)


def _check_overlaps(file: str, layout: Layout) -> None:
    """Zones must not overlap: a chip or card belongs to exactly one zone."""
    boxes = [(z, np.array(z.polygon)) for z in layout.zones]
    for i, (a, pa) in enumerate(boxes):
        for b, pb in boxes[i + 1:]:
            inter, _ = cv2.intersectConvexConvex(pa.astype(np.float32), pb.astype(np.float32))
            if inter > 1.0:
                raise ConfigError(file, f"zones.{b.name}", f"overlaps zone {a.name} ({inter:.0f} mm²)")


def load_layout(path: str | Path) -> Layout:
    """Load and check a zone layout TOML file (``hardware/camera/*.toml``)."""
    return parse_layout(read_toml(path, str(path)), str(path))


_ANGLES = np.linspace(0, 2 * np.pi, 32, endpoint=False)
_CIRCLE = np.cos(_ANGLES), np.sin(_ANGLES)  # a unit circle's points (a chip's outline, its width)


@dataclass(frozen=True)
class CameraModel:
    """A camera: intrinsics ``K``, the table-to-camera pose and the lens's radial distortion
    ``dist`` = (k1, k2) in OpenCV's model (zero: a pinhole camera)."""

    K: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    dist: tuple[float, float] = (0.0, 0.0)
    _P: np.ndarray = dataclasses.field(init=False, repr=False, compare=False)  # the projection K [R | t]
    _fc: tuple[np.ndarray, np.ndarray] = dataclasses.field(init=False, repr=False, compare=False)  # focal, centre
    _to_felt: np.ndarray = dataclasses.field(init=False, repr=False, compare=False)  # pinhole pixels to the felt

    def __post_init__(self) -> None:
        R = cv2.Rodrigues(np.asarray(self.rvec, np.float64))[0]
        object.__setattr__(self, "_P", self.K @ np.hstack([R, np.asarray(self.tvec, np.float64).reshape(3, 1)]))
        object.__setattr__(self, "_fc", (np.array([self.K[0, 0], self.K[1, 1]]), np.array(self.K[:2, 2])))
        object.__setattr__(self, "_to_felt", np.linalg.inv(self.homography()))

    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    @property
    def distorted(self) -> bool:
        return self.dist != (0.0, 0.0)

    def distort(self, uv: np.ndarray) -> np.ndarray:
        """Pinhole pixels (N x 2) to where the lens puts them (unchanged without distortion)."""
        if not self.distorted:
            return uv
        f, c = self._fc
        xy = (uv - c) / f
        out: np.ndarray = c + f * xy * self._gain((xy * xy).sum(1, keepdims=True))
        return out

    def distort_apart(self, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`distort` of pinhole columns *u* and rows *v* given apart (arrays of one shape, each
        point's column and row): no copy into N x 2 and back (the same arithmetic)."""
        if not self.distorted:
            return u, v
        (fx, fy), (cx, cy) = self._fc
        x, y = (u - cx) / fx, (v - cy) / fy
        gain = self._gain(x * x + y * y)
        return cx + fx * x * gain, cy + fy * y * gain

    def _gain(self, r2: np.ndarray) -> np.ndarray:
        """The lens's radial gain at squared distances *r2* from the centre (normalised coordinates)."""
        k1, k2 = self.dist
        gain: np.ndarray = 1 + k1 * r2 + k2 * r2 * r2 if k2 else 1 + k1 * r2
        return gain

    def undistort(self, uv: np.ndarray) -> np.ndarray:
        """Image pixels (N x 2) to where a pinhole camera would see them."""
        uv = np.asarray(uv, np.float64).reshape(-1, 2)
        if not self.distorted or not len(uv):  # OpenCV gives None for no points
            return uv
        dist = np.array([self.dist[0], self.dist[1], 0.0, 0.0, 0.0])
        out: np.ndarray = cv2.undistortPoints(uv.reshape(-1, 1, 2), self.K, dist, P=self.K).reshape(-1, 2)
        return out

    def project(self, points: np.ndarray) -> np.ndarray:
        """Image pixels of table points (N x 3, mm; or N x 2 on the felt)."""
        pts = np.asarray(points, np.float64)
        pts = pts.reshape(-1, pts.shape[-1])
        P = self._P
        if pts.shape[1] == 2:
            uv = pts @ P[:, :2].T + P[:, 3]
        else:
            uv = pts @ P[:, :3].T + P[:, 3]
        return self.distort(uv[:, :2] / uv[:, 2:3])

    def homography(self) -> np.ndarray:
        """Felt (z = 0, mm) to pinhole pixels (:meth:`undistort` an image's pixels first)."""
        R = self.R
        H = self.K @ np.column_stack([R[:, 0], R[:, 1], self.tvec.reshape(3)])
        return H / H[2, 2]

    def to_table(self, uv: np.ndarray) -> np.ndarray:
        """Felt points (mm) seen at image pixels *uv* (N x 2)."""
        pts = self.undistort(uv).reshape(-1, 1, 2)
        if not len(pts):  # OpenCV gives None for no points (a zone without a blob)
            return np.empty((0, 2))
        felt: np.ndarray = cv2.perspectiveTransform(pts, self._to_felt).reshape(-1, 2)
        return felt

    def position(self) -> np.ndarray:
        """The camera's centre in table mm."""
        return (-self.R.T @ self.tvec.reshape(3, 1)).reshape(3)

    def to_dict(self) -> dict:
        return {"K": self.K.tolist(), "rvec": self.rvec.reshape(3).tolist(), "tvec": self.tvec.reshape(3).tolist(),
                "dist": list(self.dist)}

    @classmethod
    def from_dict(cls, data: dict) -> CameraModel:
        """A saved camera; a file from before the lens fit (no ``dist``) is a pinhole camera."""
        k1, k2 = (float(k) for k in data.get("dist", (0.0, 0.0)))
        return cls(np.array(data["K"], np.float64), np.array(data["rvec"], np.float64).reshape(3, 1),
                   np.array(data["tvec"], np.float64).reshape(3, 1), (k1, k2))

    @classmethod
    def looking_at(cls, position, target, focal: float, size: tuple[int, int]) -> CameraModel:
        """A camera at *position* (mm) aimed at *target*, image *size* (w, h), level horizon."""
        position, target = np.asarray(position, float), np.asarray(target, float)
        forward = target - position
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, [0.0, 0.0, 1.0])
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        R = np.vstack([right, down, forward])
        K = np.array([[focal, 0, size[0] / 2], [0, focal, size[1] / 2], [0, 0, 1]], np.float64)
        return cls(K, cv2.Rodrigues(R)[0], (-R @ position).reshape(3, 1))


LENS_MIN_MARKERS = 4  # markers a lens fit (k1) needs (16 corners); k2 also from 8
LENS_GAIN = 0.8  # the lens model is kept only when it brings the fit under this share of the pinhole's
LENS_MIN_GAIN_PX = 0.1  # ... and by at least this much (a pinhole picture's corner noise is no lens)


@dataclass(frozen=True)
class TableCalibration:
    """The result of ``tablectl calibrate table``: the layout, the camera, how well it fits."""

    layout: Layout
    camera: CameraModel
    image_size: tuple[int, int]
    markers_seen: tuple[int, ...]
    rms_px: float
    empty: np.ndarray | None = field(default=None, compare=False, repr=False)  # the empty table's picture
    # (its felt's print: vision.counter discounts it; kept in the file as JPEG)
    blur_px: float | None = None  # the camera's blur (Gaussian sigma, px) on the markers' edges (older files: None)

    @property
    def lens_checked(self) -> bool:
        """Whether enough markers were seen to fit a lens (``LENS_MIN_MARKERS``): with fewer, a
        pinhole is assumed, not measured."""
        return len(self.markers_seen) >= LENS_MIN_MARKERS

    def zone_pixels(self, zone: Zone) -> np.ndarray:
        return self.camera.project(np.array(zone.polygon))

    def chip_diameter_px(self, x: float, y: float) -> float:
        """A chip's expected width in pixels (image columns) lying at (x, y) on the felt."""
        return float(self.chip_diameters_px(np.array([[x, y]]))[0])

    def chip_diameters_px(self, xy: np.ndarray) -> np.ndarray:
        """:meth:`chip_diameter_px` at each of *xy* (N x 2, mm) at once."""
        r, n = self.layout.chip_diameter / 2, len(_CIRCLE[0])
        points = np.stack([xy[:, :1] + r * _CIRCLE[0], xy[:, 1:] + r * _CIRCLE[1], np.zeros((len(xy), n))], axis=-1)
        widths: np.ndarray = np.ptp(self.camera.project(points.reshape(-1, 3))[:, 0].reshape(len(xy), n), axis=1)
        return widths

    def to_dict(self) -> dict:
        return {"kind": "table-calibration", "layout": self.layout.source, "camera_name": self.layout.camera,
                "camera": self.camera.to_dict(),
                "image_size": list(self.image_size), "markers_seen": list(self.markers_seen),
                "rms_px": self.rms_px, **({"blur_px": self.blur_px} if self.blur_px is not None else {}),
                **({"empty": _jpeg(self.empty)} if self.empty is not None else {})}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")


def _jpeg(picture: np.ndarray) -> str:
    """A picture as base64 JPEG text (quality 95: the print's colours within a few levels)."""
    ok, data = cv2.imencode(".jpg", picture, [cv2.IMWRITE_JPEG_QUALITY, 95])
    if not ok:
        raise CalibrationError("the empty table's picture cannot be encoded")
    return base64.b64encode(data.tobytes()).decode("ascii")


def load_calibration(path: str | Path) -> TableCalibration:
    """Load the file written by :meth:`TableCalibration.save`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("kind") != "table-calibration":
        raise CalibrationError(f"{path}: not a table calibration file")
    layout = parse_layout(data["layout"], str(path)).view(data.get("camera_name"))
    empty = None
    if data.get("empty"):  # the empty table's picture (older files have none)
        try:
            empty = cv2.imdecode(np.frombuffer(base64.b64decode(data["empty"], validate=True), np.uint8),
                                 cv2.IMREAD_COLOR)
        except (ValueError, TypeError):
            empty = None
        if empty is None or empty.shape[1::-1] != tuple(data["image_size"]):
            raise CalibrationError(f"{path}: empty: not a JPEG picture of the camera's size")
    return TableCalibration(layout, CameraModel.from_dict(data["camera"]),
                            tuple(data["image_size"]), tuple(data["markers_seen"]), float(data["rms_px"]), empty,
                            None if data.get("blur_px") is None else float(data["blur_px"]))


# Corners are refined as AprilTag does (a line fitted to each side, the corner where two meet), not by
# OpenCV's corner search, which stops short of a marker's sharp corners when it is seen at a slant (5 px
# on the far camera's nearest marker): the physically based pictures' cameras fit to 0.50-0.78 px instead
# of 0.98-1.52 (the renderer's to 0.16 instead of 0.47-0.99), the lens's k1 -0.115 to -0.118 against the
# true -0.1 instead of -0.125 to -0.130 (docs/vision.md, "Calibration"). That refinement searches the
# whole picture again (35-70 ms): it is run on a window round each marker found (a pose check 11-35 ms).
# Detector settings tried in turn (OpenCV's defaults first): 8 pixels a cell when sampling a marker's bits
# (a far, small marker's 4 are too few), then candidates kept however near one another (a near marker's
# white surround and its black square are two candidates, and OpenCV's default may keep the one that
# does not decode). With OpenCV's defaults alone the physically based right camera found 3 or 4 of its 5
# markers, and a lens is not fitted from 3.
MARKER_SETTINGS: tuple[dict[str, float], ...] = ({}, {"perspectiveRemovePixelPerCell": 8},
                                                 {"minMarkerDistanceRate": 0.01})
MARKER_WINDOW = 1.0  # the window a marker's corners are refined in: its width on each side (half of it lost a far one)


def _detectors(layout: Layout, refine: int) -> list[cv2.aruco.ArucoDetector]:
    detectors = []
    for setting in MARKER_SETTINGS:
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = refine
        for key, value in setting.items():
            setattr(params, key, value)
        detectors.append(cv2.aruco.ArucoDetector(layout.aruco_dictionary(), params))
    return detectors


def _refined(picture: np.ndarray, corners: np.ndarray, marker: int, detector: cv2.aruco.ArucoDetector
             ) -> np.ndarray | None:
    """*marker*'s corners found again, refined, in a window round where *corners* put it."""
    h, w = picture.shape
    margin = max(12, int(MARKER_WINDOW * float(np.ptp(corners[:, 0]))))
    x0, y0 = max(int(corners[:, 0].min()) - margin, 0), max(int(corners[:, 1].min()) - margin, 0)
    x1, y1 = min(int(corners[:, 0].max()) + margin + 1, w), min(int(corners[:, 1].max()) + margin + 1, h)
    found, ids, _ = detector.detectMarkers(np.ascontiguousarray(picture[y0:y1, x0:x1]))
    listed = [int(i) for i in ids.reshape(-1)] if ids is not None else []
    if listed.count(marker) != 1:
        return None
    out: np.ndarray = found[listed.index(marker)].reshape(4, 2) + np.array([x0, y0], np.float32)
    return out


def detect_markers(image: np.ndarray, layout: Layout, wanted: Iterable[int] | None = None) -> dict[int, np.ndarray]:
    """The layout's markers found in *image*: id -> 4 x 2 corner pixels (ArUco order).

    The picture as it is, then contrast-equalised (a dim or warm light leaves a marker's black and
    white a few grey levels apart), each with the ``MARKER_SETTINGS`` in turn, until every marker
    *wanted* (default: the layout's) is found: a marker is kept from the first pass that finds it
    once (an id found twice in one pass is ambiguous there) and again, its corners refined, in a
    window round it."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    known = {m.id for m in layout.markers}
    goal = known if wanted is None else known & set(wanted)
    found: dict[int, np.ndarray] = {}
    finders = _detectors(layout, cv2.aruco.CORNER_REFINE_NONE)
    refiners = _detectors(layout, cv2.aruco.CORNER_REFINE_APRILTAG)
    for picture in (gray, cv2.createCLAHE(clipLimit=3.0, tileGridSize=(8, 8)).apply(gray)):
        for finder, refiner in zip(finders, refiners):
            corners, ids, _ = finder.detectMarkers(picture)
            listed = [int(i) for i in ids.reshape(-1)] if ids is not None else []
            for c, i in zip(corners, listed):
                if i in known and i not in found and listed.count(i) == 1:
                    refined = _refined(picture, c.reshape(4, 2), i, refiner)
                    if refined is not None:
                        found[i] = refined
            if goal <= found.keys():
                return found
    return found


def pose_error(image: np.ndarray, calib: TableCalibration,
               found: dict[int, np.ndarray] | None = None) -> tuple[float | None, int]:
    """How far (px) the calibration's markers are from where *image* shows them (or *found* there:
    ``detect_markers``): the median over the markers found of their corners' mean distance from the
    calibrated projection, and how many markers were found (None with fewer than 2: nothing to tell,
    e.g. an arm over them)."""
    by_id = {m.id: m for m in calib.layout.markers}
    if found is None:
        found = detect_markers(image, calib.layout, calib.markers_seen)
    found = {i: c for i, c in found.items() if i in calib.markers_seen}
    if len(found) < 2:
        return None, len(found)
    errors = [float(np.linalg.norm(c - calib.camera.project(np.hstack([by_id[i].corners(), np.zeros((4, 1))])),
                                   axis=1).mean()) for i, c in found.items()]
    return float(np.median(errors)), len(found)


def calibrate_table(images: np.ndarray | Sequence[np.ndarray], layout: Layout, camera: str | None = None,
                    max_rms_px: float = 2.0, lens: bool = True) -> TableCalibration:
    """Camera *camera*'s pose, focal length and lens from the markers seen in *images* (one or
    more pictures from that camera as mounted: each marker's corners found in any of them).

    A pinhole camera is fitted first, then one with radial distortion (k1; k2 too with 8
    markers or more): the lens is kept when it explains the corners clearly better
    (``LENS_GAIN``, ``LENS_MIN_GAIN_PX``), so a camera without distortion stays a pinhole
    (*lens* False: a pinhole in any case).
    The calibration holds the layout as that camera sees it (:meth:`Layout.view`).
    """
    pictures = [images] if isinstance(images, np.ndarray) else list(images)
    if not pictures:
        raise CalibrationError("no picture of the table")
    layout = layout.view(camera)
    h, w = pictures[0].shape[:2]
    if any(p.shape[:2] != (h, w) for p in pictures):
        raise CalibrationError("the table's pictures differ in size: they are not from one camera")
    seen: dict[int, list[np.ndarray]] = {}
    found = [detect_markers(picture, layout) for picture in pictures]
    for markers in found:
        for i, corners in markers.items():
            seen.setdefault(i, []).append(corners)
    if len(seen) < 3:
        raise CalibrationError(f"only {len(seen)} of the {len(layout.markers)} markers seen "
                               f"(ids {sorted(seen)}); need at least 3")
    by_id = {m.id: m for m in layout.markers}
    obj = np.vstack([np.hstack([by_id[i].corners(), np.zeros((4, 1))]) for i in sorted(seen)
                     for _ in seen[i]]).astype(np.float32)
    img = np.vstack([c for i in sorted(seen) for c in seen[i]]).astype(np.float32)
    K0 = np.array([[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], np.float64)
    fixed = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K3)
    rms, K, dist, rvecs, tvecs = cv2.calibrateCamera([obj], [img], (w, h), K0, np.zeros(5),
                                                     flags=fixed | cv2.CALIB_FIX_K1 | cv2.CALIB_FIX_K2)
    if lens and len(seen) >= LENS_MIN_MARKERS:
        lens_flags = fixed | (0 if len(seen) >= 8 else cv2.CALIB_FIX_K2)
        fit = cv2.calibrateCamera([obj], [img], (w, h), K.copy(), np.zeros(5), flags=lens_flags)
        if (np.isfinite(fit[0]) and fit[0] < LENS_GAIN * rms and rms - fit[0] >= LENS_MIN_GAIN_PX
                and abs(float(fit[2].ravel()[0])) < 1.0):
            rms, K, dist, rvecs, tvecs = fit
    if not np.isfinite(rms) or rms > max_rms_px:
        raise CalibrationError(f"markers do not fit one camera: reprojection error {rms:.2f} px > {max_rms_px}")
    k = np.asarray(dist, np.float64).ravel()
    model = CameraModel(K, np.asarray(rvecs[0]).reshape(3, 1), np.asarray(tvecs[0]).reshape(3, 1),
                        (float(k[0]), float(k[1])))
    if model.position()[2] <= 0:
        raise CalibrationError("the fitted camera is below the felt: check the marker positions in the layout")
    empty = pictures[0] if len(pictures) == 1 else np.median(np.stack(pictures), axis=0).astype(np.uint8)
    blur = marker_blur((picture, markers.values()) for picture, markers in zip(pictures, found))
    calib = TableCalibration(layout, model, (w, h), tuple(sorted(seen)), float(rms), empty, blur)
    beyond = out_of_view(calib).get("reference patch")
    if beyond is not None:  # every colour is measured against it
        raise CalibrationError(f"camera {layout.camera}'s white reference patch lies {beyond:.0f} px out of its "
                               "picture: aim the camera so that it sees the patch whole")
    return calib


def intrusions(calib: TableCalibration) -> list[tuple[str, str]]:
    """(zone, what) pairs where a marker's quiet zone or a reference patch lies in the image
    space a chip zone's tallest stack takes, in this camera's view: a stack there would merge
    with it (the layout must move the marker)."""
    lay, cam = calib.layout, calib.camera
    statics = [(f"marker {m.id}", np.array([[m.x - q, m.y - q], [m.x + q, m.y - q], [m.x + q, m.y + q],
                                            [m.x - q, m.y + q]])) for m in lay.markers for q in [0.75 * m.size]]
    statics += [(f"reference patch of camera {c.name}", np.array(c.reference)) for c in lay.cameras]
    statics += [(f"colour patch {p.name} of camera {c.name}", np.array(p.polygon)) for c in lay.cameras
                for p in c.patches]
    out = []
    for zone in lay.zones:
        if zone.kind not in ("bet", "pot"):
            continue
        poly = np.array(zone.polygon)
        top = np.hstack([poly, np.full((len(poly), 1), lay.max_stack * lay.chip_thickness)])
        space = cv2.convexHull(np.vstack([cam.project(poly), cam.project(top)]).astype(np.float32)).reshape(-1, 2)
        for what, pts in statics:
            depth = (cam.R @ np.hstack([pts, np.zeros((len(pts), 1))]).T + cam.tvec).reshape(3, -1)[2]
            if (depth <= 0).any():
                continue  # behind the camera
            hull = cv2.convexHull(cam.project(pts).astype(np.float32)).reshape(-1, 2)
            if cv2.intersectConvexConvex(space, hull)[0] > 1.0:
                out.append((zone.name, what))
    return out


def out_of_view(calib: TableCalibration, inside_mm: float = 0.0) -> dict[str, float]:
    """What of this camera's layout its picture does not hold whole, each with how far (px) its furthest
    point lies beyond the picture's edge: a chip zone where a stack of ``max_stack`` chips standing
    *inside_mm* or more inside the zone's edge would not be seen whole (its outline and its top), a card
    area, the white reference patch (``"reference patch"``), a colour card patch (``"colour patch NAME"``).
    A stack there is not seen, or seen cut by the edge: such a zone cannot be counted."""
    lay, cam = calib.layout, calib.camera
    w, h = calib.image_size
    ring = np.column_stack(_CIRCLE)
    reach = max(lay.chip_diameter / 2 - inside_mm, 0.0)
    things = [(zone.name, np.array(zone.polygon), zone.kind != "cards") for zone in lay.zones]
    if lay.reference is not None:
        things.append(("reference patch", np.array(lay.reference), False))
    things += [(f"colour patch {p.name}", np.array(p.polygon), False) for p in lay.mount().patches]
    out = {}
    for name, poly, stack in things:
        pts = (poly[:, None, :] + (reach if stack else 0.0) * ring[None]).reshape(-1, 2)
        heights = (0.0, lay.max_stack * lay.chip_thickness) if stack else (0.0,)
        uv = cam.project(np.vstack([np.column_stack([pts, np.full(len(pts), z)]) for z in heights]))
        beyond = max(-uv[:, 0].min(), -uv[:, 1].min(), uv[:, 0].max() - (w - 1), uv[:, 1].max() - (h - 1))
        if beyond > 0:
            out[name] = round(float(beyond), 1)
    return out


COLOURS = {"bet": (0, 220, 255), "pot": (255, 200, 0), "cards": (255, 255, 255)}


def draw_calibration(image: np.ndarray, calib: TableCalibration) -> np.ndarray:
    """A copy of *image* with the zones, markers and reference patch drawn, for the installer."""
    out = image.copy()
    for zone in calib.layout.zones:
        pts = calib.zone_pixels(zone).round().astype(np.int32)
        cv2.polylines(out, [pts], True, COLOURS[zone.kind], 2, cv2.LINE_AA)
        (tw, th), _ = cv2.getTextSize(zone.name, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)
        x, y = pts.mean(axis=0)
        cv2.putText(out, zone.name, (int(x - tw / 2), int(y + th / 2)), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                    COLOURS[zone.kind], 1, cv2.LINE_AA)
    ref = calib.camera.project(np.array(calib.layout.reference)).round().astype(np.int32)  # a view's patch
    cv2.polylines(out, [ref], True, (255, 0, 255), 2, cv2.LINE_AA)
    for marker in calib.layout.markers:
        pts = calib.camera.project(marker.corners()).round().astype(np.int32)
        colour = (0, 255, 0) if marker.id in calib.markers_seen else (0, 0, 255)
        cv2.polylines(out, [pts], True, colour, 2, cv2.LINE_AA)
    cv2.putText(out, f"camera {calib.layout.camera}: markers {list(calib.markers_seen)}  rms {calib.rms_px:.2f} px  "
                f"f {calib.camera.K[0, 0]:.0f} px", (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (255, 255, 255), 2,
                cv2.LINE_AA)
    return out
