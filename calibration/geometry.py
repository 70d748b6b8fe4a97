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

import dataclasses
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = [
    "CalibrationError", "CameraModel", "CameraMount", "Layout", "LayoutError", "Marker", "TableCalibration", "Zone",
    "calibrate_table", "detect_markers", "draw_calibration", "intrusions", "load_calibration", "load_layout",
]

ZONE_KINDS = ("bet", "pot", "cards")


class LayoutError(ValueError):
    """A zone layout that cannot be loaded: names the *file*, the *key* and the *reason*."""

    def __init__(self, file: str, key: str, reason: str) -> None:
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}")


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
            raise LayoutError(self.name or "<layout>", "cameras",
                              f"name a camera: {', '.join(c.name for c in self.cameras)}")
        for mount in self.cameras:
            if mount.name == name:
                return mount
        raise LayoutError(self.name or "<layout>", "cameras",
                          f"no camera {name!r} (cameras: {', '.join(c.name for c in self.cameras)})")

    def view(self, name: str | None = None) -> "Layout":
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

    def aruco_dictionary(self):
        return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))


def _polygon(file: str, key: str, value) -> tuple[tuple[float, float], ...]:
    try:
        points = tuple((float(x), float(y)) for x, y in value)
    except (TypeError, ValueError):
        raise LayoutError(file, key, "expected a list of [x, y] points in mm") from None
    if len(points) < 3:
        raise LayoutError(file, key, f"a polygon needs at least 3 points, not {len(points)}")
    return points


def _number(file: str, table: dict, section: str, key: str, kind=float, positive=True):
    if key not in table:
        raise LayoutError(file, f"{section}.{key}", "missing")
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise LayoutError(file, f"{section}.{key}", f"expected a {kind.__name__}, not {value!r}")
    if positive and value <= 0:
        raise LayoutError(file, f"{section}.{key}", f"must be positive, not {value}")
    return kind(value)


def parse_layout(data: dict, file: str = "<layout>") -> Layout:
    """Check and build a :class:`Layout` from its TOML data; errors name the bad key."""
    for section in ("table", "chip", "aruco", "markers", "zones", "cameras"):
        if section not in data:
            raise LayoutError(file, section, "missing")
    known = {"table", "chip", "aruco", "markers", "zones", "cameras"}
    for key in data:
        if key not in known:
            raise LayoutError(file, key, "unknown section")
    table, chip = data["table"], data["chip"]
    dictionary = data["aruco"].get("dictionary")
    if not isinstance(dictionary, str) or not hasattr(cv2.aruco, dictionary):
        raise LayoutError(file, "aruco.dictionary", f"not an OpenCV ArUco dictionary: {dictionary!r}")
    markers = []
    for i, m in enumerate(data["markers"]):
        key = f"markers[{i}]"
        if not isinstance(m.get("id"), int) or m["id"] < 0:
            raise LayoutError(file, f"{key}.id", f"expected a marker id >= 0, not {m.get('id')!r}")
        markers.append(Marker(m["id"], _number(file, m, key, "x_mm", positive=False),
                              _number(file, m, key, "y_mm", positive=False), _number(file, m, key, "size_mm")))
    if len({m.id for m in markers}) != len(markers):
        raise LayoutError(file, "markers", "marker ids must be unique")
    if len(markers) < 4:
        raise LayoutError(file, "markers", f"at least 4 markers are needed, not {len(markers)}")
    zones = []
    for i, z in enumerate(data["zones"]):
        key = f"zones[{i}]"
        name, kind = z.get("name"), z.get("kind")
        if not isinstance(name, str) or not name:
            raise LayoutError(file, f"{key}.name", "missing")
        if kind not in ZONE_KINDS:
            raise LayoutError(file, f"{key}.kind", f"expected one of {', '.join(ZONE_KINDS)}, not {kind!r}")
        if kind == "bet" and not (name.startswith("bet:") and name[4:].isdigit()):
            raise LayoutError(file, f"{key}.name", f"a bet zone is named bet:N, not {name!r}")
        if kind == "pot" and name != "pot":
            raise LayoutError(file, f"{key}.name", f"the pot zone is named pot, not {name!r}")
        zones.append(Zone(name, kind, _polygon(file, f"{key}.polygon", z.get("polygon"))))
    if len({z.name for z in zones}) != len(zones):
        raise LayoutError(file, "zones", "zone names must be unique")
    layout = Layout(
        name=str(table.get("name", "")),
        width=_number(file, table, "table", "width_mm"), depth=_number(file, table, "table", "depth_mm"),
        corner_radius=_number(file, table, "table", "corner_radius_mm", positive=False),
        chip_diameter=_number(file, chip, "chip", "diameter_mm"),
        chip_thickness=_number(file, chip, "chip", "thickness_mm"),
        max_stack=_number(file, chip, "chip", "max_stack", kind=int),
        dictionary=dictionary, reference=None,
        markers=tuple(markers), zones=tuple(zones), source=data,
        cameras=_cameras(file, data["cameras"], zones),
    )
    _check_overlaps(file, layout)
    return layout


def _triple(file: str, key: str, value) -> tuple[float, float, float]:
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise LayoutError(file, key, f"expected [x, y, z] in mm, not {value!r}")
    return tuple(float(v) for v in value)


def _cameras(file: str, data, zones: list[Zone]) -> tuple[CameraMount, ...]:
    """The ``[[cameras]]``: every chip and card zone is counted by exactly one of them."""
    if not isinstance(data, list) or not data:
        raise LayoutError(file, "cameras", "at least one [[cameras]] is needed")
    mounts, owner = [], {}
    names = {z.name for z in zones}
    for i, c in enumerate(data):
        key = f"cameras[{i}]"
        name = c.get("name")
        if not isinstance(name, str) or not name:
            raise LayoutError(file, f"{key}.name", "missing")
        size = c.get("size_px", [1280, 720])
        if (not isinstance(size, list) or len(size) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in size)):
            raise LayoutError(file, f"{key}.size_px", f"expected [width, height] in pixels, not {size!r}")
        listed = c.get("zones")
        if not isinstance(listed, list) or not listed or not all(isinstance(z, str) for z in listed):
            raise LayoutError(file, f"{key}.zones", "expected a list of zone names")
        for zone in listed:
            if zone not in names:
                raise LayoutError(file, f"{key}.zones", f"no zone {zone!r}")
            if zone in owner:
                raise LayoutError(file, f"{key}.zones", f"zone {zone} is already counted by camera {owner[zone]}")
            owner[zone] = name
        mounts.append(CameraMount(
            name, _triple(file, f"{key}.position_mm", c.get("position_mm")),
            _triple(file, f"{key}.aim_mm", c.get("aim_mm")), _number(file, c, key, "focal_px"),
            (size[0], size[1]), _polygon(file, f"{key}.reference", c.get("reference")), tuple(listed)))
    if len({m.name for m in mounts}) != len(mounts):
        raise LayoutError(file, "cameras", "camera names must be unique")
    unseen = sorted(names - set(owner))
    if unseen:
        raise LayoutError(file, "cameras", f"no camera counts zone(s) {', '.join(unseen)}")
    return tuple(mounts)


def _check_overlaps(file: str, layout: Layout) -> None:
    """Zones must not overlap: a chip or card belongs to exactly one zone."""
    boxes = [(z, np.array(z.polygon)) for z in layout.zones]
    for i, (a, pa) in enumerate(boxes):
        for b, pb in boxes[i + 1:]:
            inter, _ = cv2.intersectConvexConvex(pa.astype(np.float32), pb.astype(np.float32))
            if inter > 1.0:
                raise LayoutError(file, f"zones.{b.name}", f"overlaps zone {a.name} ({inter:.0f} mm²)")


def load_layout(path: str | Path) -> Layout:
    """Load and check a zone layout TOML file (``hardware/camera/*.toml``)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise LayoutError(str(path), "", f"not TOML: {exc}") from None
    return parse_layout(data, str(path))


@dataclass(frozen=True)
class CameraModel:
    """A pinhole camera (no distortion): intrinsics ``K`` and the table-to-camera pose."""

    K: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray

    def __post_init__(self) -> None:
        R = cv2.Rodrigues(np.asarray(self.rvec, np.float64))[0]
        object.__setattr__(self, "_P", self.K @ np.hstack([R, np.asarray(self.tvec, np.float64).reshape(3, 1)]))

    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    def project(self, points: np.ndarray) -> np.ndarray:
        """Image pixels of table points (N x 3, mm; or N x 2 on the felt)."""
        pts = np.asarray(points, np.float64)
        pts = pts.reshape(-1, pts.shape[-1])
        P = self._P
        if pts.shape[1] == 2:
            uv = pts @ P[:, :2].T + P[:, 3]
        else:
            uv = pts @ P[:, :3].T + P[:, 3]
        return uv[:, :2] / uv[:, 2:3]

    def homography(self) -> np.ndarray:
        """Felt (z = 0, mm) to image pixels."""
        R = self.R
        H = self.K @ np.column_stack([R[:, 0], R[:, 1], self.tvec.reshape(3)])
        return H / H[2, 2]

    def to_table(self, uv: np.ndarray) -> np.ndarray:
        """Felt points (mm) seen at image pixels *uv* (N x 2)."""
        pts = np.asarray(uv, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, np.linalg.inv(self.homography())).reshape(-1, 2)

    def position(self) -> np.ndarray:
        """The camera's centre in table mm."""
        return (-self.R.T @ self.tvec.reshape(3, 1)).reshape(3)

    def to_dict(self) -> dict:
        return {"K": self.K.tolist(), "rvec": self.rvec.reshape(3).tolist(), "tvec": self.tvec.reshape(3).tolist()}

    @classmethod
    def from_dict(cls, data: dict) -> "CameraModel":
        return cls(np.array(data["K"], np.float64), np.array(data["rvec"], np.float64).reshape(3, 1),
                   np.array(data["tvec"], np.float64).reshape(3, 1))

    @classmethod
    def looking_at(cls, position, target, focal: float, size: tuple[int, int]) -> "CameraModel":
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


@dataclass(frozen=True)
class TableCalibration:
    """The result of ``tablectl calibrate table``: the layout, the camera, how well it fits."""

    layout: Layout
    camera: CameraModel
    image_size: tuple[int, int]
    markers_seen: tuple[int, ...]
    rms_px: float

    def zone_pixels(self, zone: Zone) -> np.ndarray:
        return self.camera.project(np.array(zone.polygon))

    def chip_diameter_px(self, x: float, y: float) -> float:
        """A chip's expected width in pixels (image columns) lying at (x, y) on the felt."""
        r = self.layout.chip_diameter / 2
        a = np.linspace(0, 2 * np.pi, 32, endpoint=False)
        uv = self.camera.project(np.column_stack([x + r * np.cos(a), y + r * np.sin(a), np.zeros(32)]))
        return float(np.ptp(uv[:, 0]))

    def to_dict(self) -> dict:
        return {"kind": "table-calibration", "layout": self.layout.source, "camera_name": self.layout.camera,
                "camera": self.camera.to_dict(),
                "image_size": list(self.image_size), "markers_seen": list(self.markers_seen),
                "rms_px": self.rms_px}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")


def load_calibration(path: str | Path) -> TableCalibration:
    """Load the file written by :meth:`TableCalibration.save`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("kind") != "table-calibration":
        raise CalibrationError(f"{path}: not a table calibration file")
    layout = parse_layout(data["layout"], str(path)).view(data.get("camera_name"))
    return TableCalibration(layout, CameraModel.from_dict(data["camera"]),
                            tuple(data["image_size"]), tuple(data["markers_seen"]), float(data["rms_px"]))


def detect_markers(image: np.ndarray, layout: Layout) -> dict[int, np.ndarray]:
    """The layout's markers found in *image*: id -> 4 x 2 corner pixels (ArUco order)."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    detector = cv2.aruco.ArucoDetector(layout.aruco_dictionary(), cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(gray)
    known = {m.id for m in layout.markers}
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2) for c, i in zip(corners, ids.reshape(-1)) if int(i) in known}


def pose_error(image: np.ndarray, calib: TableCalibration) -> tuple[float | None, int]:
    """How far (px) the calibration's markers are from where *image* shows them: the median over
    the markers found of their corners' mean distance from the calibrated projection, and how
    many markers were found (None with fewer than 2: nothing to tell, e.g. an arm over them)."""
    by_id = {m.id: m for m in calib.layout.markers}
    found = {i: c for i, c in detect_markers(image, calib.layout).items() if i in calib.markers_seen}
    if len(found) < 2:
        return None, len(found)
    errors = [float(np.linalg.norm(c - calib.camera.project(np.hstack([by_id[i].corners(), np.zeros((4, 1))])),
                                   axis=1).mean()) for i, c in found.items()]
    return float(np.median(errors)), len(found)


def calibrate_table(image: np.ndarray, layout: Layout, camera: str | None = None,
                    max_rms_px: float = 2.0) -> TableCalibration:
    """Camera *camera*'s pose and focal length from the markers seen in *image* (its picture).

    The calibration holds the layout as that camera sees it (:meth:`Layout.view`).
    """
    layout = layout.view(camera)
    found = detect_markers(image, layout)
    if len(found) < 3:
        raise CalibrationError(f"only {len(found)} of the {len(layout.markers)} markers seen "
                               f"(ids {sorted(found)}); need at least 3")
    by_id = {m.id: m for m in layout.markers}
    obj = np.vstack([np.hstack([by_id[i].corners(), np.zeros((4, 1))]) for i in sorted(found)]).astype(np.float32)
    img = np.vstack([found[i] for i in sorted(found)]).astype(np.float32)
    h, w = image.shape[:2]
    K0 = np.array([[w, 0, w / 2], [0, w, h / 2], [0, 0, 1]], np.float64)
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT | cv2.CALIB_FIX_ASPECT_RATIO
             | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K1 | cv2.CALIB_FIX_K2 | cv2.CALIB_FIX_K3)
    rms, K, _, rvecs, tvecs = cv2.calibrateCamera([obj], [img], (w, h), K0, np.zeros(5), flags=flags)
    if not np.isfinite(rms) or rms > max_rms_px:
        raise CalibrationError(f"markers do not fit one camera: reprojection error {rms:.2f} px > {max_rms_px}")
    camera = CameraModel(K, np.asarray(rvecs[0]).reshape(3, 1), np.asarray(tvecs[0]).reshape(3, 1))
    if camera.position()[2] <= 0:
        raise CalibrationError("the fitted camera is below the felt: check the marker positions in the layout")
    return TableCalibration(layout, camera, (w, h), tuple(sorted(found)), float(rms))


def intrusions(calib: TableCalibration) -> list[tuple[str, str]]:
    """(zone, what) pairs where a marker's quiet zone or a reference patch lies in the image
    space a chip zone's tallest stack takes, in this camera's view: a stack there would merge
    with it (the layout must move the marker)."""
    lay, cam = calib.layout, calib.camera
    statics = [(f"marker {m.id}", np.array([[m.x - q, m.y - q], [m.x + q, m.y - q], [m.x + q, m.y + q],
                                            [m.x - q, m.y + q]])) for m in lay.markers for q in [0.75 * m.size]]
    statics += [(f"reference patch of camera {c.name}", np.array(c.reference)) for c in lay.cameras]
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
