"""A renderer of the table as the chip camera sees it, with exact ground truth.

No public data set of casino chips exists, so the vision pipeline is measured
on pictures drawn here: the felt, the ArUco markers and the white reference
patch, cards face up or down, chips spread and stacked, arms reaching over
zones, under a random light colour and level, with glare, blur and noise, seen
through the camera's auto exposure (it keeps the frame's mean brightness within
its range, as libcamera does by default, so brighter light does not clip the
white patch; the light's colour and the glare stay).

A stack is a cylinder of chip-thickness layers: each layer shows its side (the
face colour, shaded, with the white edge spots that face the camera) and the
top chip its face (colour, edge spots, a lighter inlay). Everything is
projected by the same :class:`~calibration.geometry.CameraModel` the counting
uses, drawn at twice the size and reduced (anti-aliasing). Pure: a
:class:`Scene` and a seed in, an image out.
"""
from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from calibration.geometry import CameraModel, Layout, Marker, Zone
from calibration.mount import mount_camera

__all__ = ["CHIP_COLOURS", "FELT", "HOUSE_004", "Arm", "Scene", "Stack", "apart", "calibration_shows", "mount_camera",
           "eval_frame", "eval_zones", "random_scene", "render", "sequence", "write_evaluation_set", "write_video",
           "zone_truth"]

CHIP_COLOURS = {  # BGR face colours of the common colour names (profile ``chips[].colour``)
    "grey": (150, 150, 150), "red": (40, 40, 200), "green": (70, 175, 80), "blue": (175, 80, 30),
    "black": (35, 35, 35), "pink": (190, 130, 245), "white": (235, 235, 235), "yellow": (40, 200, 230),
    "purple": (140, 40, 120), "orange": (30, 130, 240), "brown": (40, 70, 120),
}
FELT = (45, 105, 25)
RAIL = (30, 45, 70)
INK = (120, 185, 205)  # the felt's print (BGR)
LINE_MM = 8.0  # a printed betting line's width
SKIN = ((120, 150, 200), (90, 120, 170), (60, 85, 125), (150, 175, 215))
SLEEVE = ((40, 40, 40), (160, 90, 40), (200, 200, 200), (60, 40, 120))
SS = 2  # supersampling factor
BGR = tuple[float, ...]


def _gains(values: Iterable[float]) -> tuple[float, float, float]:
    """Three light gains (B, G, R)."""
    b, g, r = values
    return b, g, r


@dataclass(frozen=True)
class Stack:
    """Chips stacked at (x, y) mm: *count* chips of *value* (``count`` 1 is a chip lying alone), or a
    mixed stack: *layers* gives each chip's value bottom to top (its last is *value*, its length *count*)."""

    x: float
    y: float
    value: int
    count: int
    layers: tuple[int, ...] = ()

    @property
    def chips(self) -> tuple[int, ...]:
        """Each chip's value, bottom to top."""
        return self.layers or (self.value,) * self.count

    @classmethod
    def mixed(cls, x: float, y: float, layers: Iterable[int]) -> Stack:
        """A stack of the chips *layers* (bottom to top)."""
        chips = tuple(int(v) for v in layers)
        return cls(x, y, chips[-1], len(chips), chips if len(set(chips)) > 1 else ())


@dataclass(frozen=True)
class Arm:
    """An arm reaching from the rail at (x0, y0) to a hand over (x1, y1), *height* mm above the felt."""

    x0: float
    y0: float
    x1: float
    y1: float
    height: float = 90.0
    skin: int = 0
    sleeve: int = 0


@dataclass(frozen=True)
class Scene:
    """Everything on the table for one picture, and the light it is seen under."""

    stacks: tuple[Stack, ...] = ()
    cards: tuple[tuple[str, bool], ...] = ()  # (zone name, face up)
    arms: tuple[Arm, ...] = ()
    light: tuple[float, float, float] = (1.0, 1.0, 1.0)  # BGR gains (colour and level)
    glare: tuple[float, float, float] = (0.0, 0.0, 0.0)  # (u, v) in 0..1 and strength
    blur: float = 0.6
    noise: float = 2.0
    colours: dict[int, str] = field(default_factory=dict)  # value -> colour name
    auto_exposure: bool = True  # the camera's exposure follows the light (False: fixed exposure)
    felt: BGR = FELT
    illuminant: tuple[float, ...] | None = None  # a 3 x 3 BGR mixing (row-major): a lamp's light across channels
    spots: tuple[tuple[float, float, float], ...] = ()  # overhead spots: (u, v) in 0..1, extra light at the centre
    tone: float = 1.0  # the camera's response: level ** tone (1: linear; under 1 lifts the shadows)
    flare: float = 0.0  # veiling light added over the whole picture (grey levels)
    betting_line: float = 0.0  # a printed betting line this far (mm) in from the felt's edge (0: none)


def rounded_rect(hw: float, hd: float, r: float, n: int = 24) -> np.ndarray:
    """A rounded rectangle's outline (mm), counter-clockwise, half width *hw*, half depth *hd*, corner radius *r*."""
    pts = []
    for cx, cy, a0 in ((hw - r, hd - r, 0), (-hw + r, hd - r, 90), (-hw + r, -hd + r, 180), (hw - r, -hd + r, 270)):
        for k in range(n + 1):
            a = math.radians(a0 + 90 * k / n)
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.array(pts)


def _felt_outline(layout: Layout, n: int = 24) -> np.ndarray:
    return rounded_rect(layout.width / 2, layout.depth / 2, layout.corner_radius, n)


def _big(uv: np.ndarray) -> np.ndarray:
    """Image pixels to the supersampled canvas: pixel centres stay pixel centres once reduced."""
    return uv * SS + (SS - 1) / 2


def _fill(img: np.ndarray, camera: CameraModel, pts3: np.ndarray, colour: BGR, convex: bool = True) -> None:
    uv = np.round(_big(camera.project(pts3)) * 16).astype(np.int32)
    if convex:
        cv2.fillConvexPoly(img, uv, colour, cv2.LINE_AA, 4)
    else:
        cv2.fillPoly(img, [uv], colour, cv2.LINE_AA, 4)


def _warp_flat(img: np.ndarray, camera: CameraModel, picture: np.ndarray, corners_mm: np.ndarray) -> None:
    """Paste *picture* flat on the felt at *corners_mm* (TL, TR, BR, BL)."""
    h, w = picture.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    dst = np.asarray(_big(camera.project(corners_mm)), np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    x, y, bw, bh = cv2.boundingRect(dst)
    x0, y0 = max(x - 2, 0), max(y - 2, 0)
    x1, y1 = min(x + bw + 2, img.shape[1]), min(y + bh + 2, img.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ M
    x, y, bw, bh = x0, y0, x1 - x0, y1 - y0
    warped = cv2.warpPerspective(picture, T, (bw, bh), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), T, (bw, bh), flags=cv2.INTER_LINEAR)
    a = (mask.astype(np.float32) / 255)[..., None]
    roi = img[y:y + bh, x:x + bw]
    roi[:] = (warped * a + roi * (1 - a)).astype(np.uint8)


def _marker_picture(layout: Layout, marker_id: int) -> np.ndarray:
    side = 240
    dictionary = layout.aruco_dictionary()
    marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
    return cv2.cvtColor(marker, cv2.COLOR_GRAY2BGR)


def _card_picture(face_up: bool, rng: np.random.Generator) -> np.ndarray:
    card = np.full((176, 126, 3), 245, np.uint8)
    if face_up:
        colour = (30, 30, 200) if rng.random() < 0.5 else (20, 20, 20)
        cv2.putText(card, "AKQJT98765432"[rng.integers(13)], (8, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.1, colour, 3)
        cv2.circle(card, (63, 88), 22, colour, -1)
    else:
        cv2.rectangle(card, (8, 8), (117, 167), (40, 40, 150), -1)
        for k in range(-176, 176, 14):
            cv2.line(card, (8, 8 + k), (117, 117 + k), (80, 80, 200), 3)
        cv2.rectangle(card, (0, 0), (125, 175), (245, 245, 245), 8)
    return card


def _stack(img: np.ndarray, camera: CameraModel, layout: Layout, stack: Stack, colours: dict[int, str],
           rng: np.random.Generator) -> None:
    r, t = layout.chip_diameter / 2, layout.chip_thickness
    cam = camera.position()
    spot = (215.0, 215.0, 215.0)
    angles = np.linspace(0, 2 * math.pi, 40, endpoint=False)
    ring = np.column_stack([np.cos(angles), np.sin(angles)])
    spin = rng.uniform(0, 2 * math.pi)
    for k, value in enumerate(stack.chips):
        face = np.array(CHIP_COLOURS[colours[value]], np.float64)
        side = tuple(float(c) for c in face * 0.78)
        dx, dy = rng.normal(0, 0.5, 2) if k else (0.0, 0.0)
        cx, cy = stack.x + dx, stack.y + dy
        z0, z1 = k * t, (k + 1) * t
        low = np.column_stack([cx + r * ring[:, 0], cy + r * ring[:, 1], np.full(len(ring), z0)])
        high = low.copy()
        high[:, 2] = z1
        uv = _big(camera.project(np.vstack([low, high]))) * 16
        hull = cv2.convexHull(np.round(uv).astype(np.int32))
        cv2.fillConvexPoly(img, hull, side, cv2.LINE_AA, 4)
        rot = spin + k * 0.7
        for j in range(6):
            a = rot + j * math.pi / 3
            normal = np.array([math.cos(a), math.sin(a)])
            if normal @ (cam[:2] - (cx, cy)) <= 0:
                continue
            a0, a1 = a - 0.13, a + 0.13
            quad = np.array([[cx + r * math.cos(a0), cy + r * math.sin(a0), z0 + 0.3],
                             [cx + r * math.cos(a1), cy + r * math.sin(a1), z0 + 0.3],
                             [cx + r * math.cos(a1), cy + r * math.sin(a1), z1 - 0.3],
                             [cx + r * math.cos(a0), cy + r * math.sin(a0), z1 - 0.3]])
            _fill(img, camera, quad, spot)
        if k == stack.count - 1:
            _fill(img, camera, high, tuple(float(c) for c in face))
            for j in range(6):
                a = rot + j * math.pi / 3
                notch = [[cx + rr * math.cos(a + s), cy + rr * math.sin(a + s), z1]
                         for rr, s in ((0.80 * r, -0.14), (r, -0.13), (r, 0.13), (0.80 * r, 0.14))]
                _fill(img, camera, np.array(notch), spot)
            inlay = tuple(float(c) for c in face * 0.55 + 235 * 0.45)
            _fill(img, camera, np.column_stack([cx + 0.45 * r * ring[:, 0], cy + 0.45 * r * ring[:, 1],
                                                np.full(len(ring), z1)]), inlay)


def _arm(img: np.ndarray, camera: CameraModel, arm: Arm) -> None:
    p0, p1 = np.array([arm.x0, arm.y0]), np.array([arm.x1, arm.y1])
    d = (p1 - p0) / max(np.linalg.norm(p1 - p0), 1e-6)
    n = np.array([-d[1], d[0]])
    z0, z1 = arm.height + 120.0, arm.height
    wrist = p1 - d * 60
    sleeve = [(*(p0 + n * 55), z0), (*(wrist + n * 42), z1), (*(wrist - n * 42), z1), (*(p0 - n * 55), z0)]
    _fill(img, camera, np.array(sleeve), SLEEVE[arm.sleeve % len(SLEEVE)])
    angles = np.linspace(0, 2 * math.pi, 32, endpoint=False)
    hand = [(*(p1 + d * 70 * math.cos(a) + n * 48 * math.sin(a)), z1) for a in angles]
    _fill(img, camera, np.array(hand), SKIN[arm.skin % len(SKIN)])


def render(scene: Scene, layout: Layout, camera: CameraModel, size: tuple[int, int] = (1280, 720),
           seed: int = 0) -> np.ndarray:
    """The picture of *scene*: BGR uint8 of *size* (w, h). A camera with distortion (``dist``)
    sees the pinhole picture through its lens (:func:`_lens`)."""
    rng = np.random.default_rng(seed)
    lens, camera = camera, dataclasses.replace(camera, dist=(0.0, 0.0))
    w, h = size
    img = np.zeros((h * SS, w * SS, 3), np.uint8)
    img[:] = (40, 45, 50)
    outline = _felt_outline(layout)
    rail = outline * (1 + 90 / min(layout.width, layout.depth))
    _fill(img, camera, rail, RAIL, convex=False)
    _fill(img, camera, outline, scene.felt, convex=False)
    if scene.betting_line:  # printed on the felt, LINE_MM wide, its corners rounded like the felt's
        d, r = scene.betting_line, max(layout.corner_radius - scene.betting_line, 20.0)
        for inset, colour in ((d - LINE_MM / 2, INK), (d + LINE_MM / 2, scene.felt)):
            ring = rounded_rect(layout.width / 2 - inset, layout.depth / 2 - inset, r)
            _fill(img, camera, ring, colour, convex=False)
    for mount in layout.cameras:  # every camera's white reference patch and colour card
        _fill(img, camera, np.array(mount.reference), (235, 235, 235))
        for patch in mount.patches:
            _fill(img, camera, np.array(patch.polygon), patch.srgb[::-1])
    for marker in layout.markers:
        quiet = _quiet_zone(marker)
        _fill(img, camera, quiet, (240, 240, 240))
        _warp_flat(img, camera, _marker_picture(layout, marker.id), np.hstack([marker.corners(), np.zeros((4, 1))]))
    for name, face_up in scene.cards:  # (another camera's card areas too: a scene of the whole table)
        zone = next(z for z in layout.zones + layout.elsewhere if z.name == name)
        cx, cy = np.mean(zone.polygon, axis=0)
        a = rng.uniform(-0.15, 0.15)
        corners = [(cx + x * math.cos(a) - y * math.sin(a), cy + x * math.sin(a) + y * math.cos(a), 0.0)
                   for x, y in ((-31.5, 44), (31.5, 44), (31.5, -44), (-31.5, -44))]
        _warp_flat(img, camera, _card_picture(face_up, rng), np.array(corners))
    cam = camera.position()
    for stack in sorted(scene.stacks, key=lambda s: -math.hypot(s.x - cam[0], s.y - cam[1])):
        _stack(img, camera, layout, stack, scene.colours, rng)
    for arm in scene.arms:
        _arm(img, camera, arm)
    out: np.ndarray = _lens(cv2.resize(img, size, interpolation=cv2.INTER_AREA).astype(np.float32), lens)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    vignette = 1 - 0.25 * (((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2)
    out *= vignette[..., None]
    unlit = float(out.mean())
    if scene.illuminant is not None:
        out = cv2.transform(out, np.array(scene.illuminant, np.float32).reshape(3, 3))
    out *= np.array(scene.light, np.float32)
    for su, sv, strength in scene.spots:  # light pooled under overhead spots (a fifth of the picture wide)
        pool = np.exp(-(((xx - su * w) / (0.2 * w)) ** 2 + ((yy - sv * h) / (0.2 * w)) ** 2))
        out *= (1 + strength * pool)[..., None]
    gu, gv, gs = scene.glare
    if gs:  # a reflection of the lamp: white under a white lamp, the lamp's colour under another
        lamp = np.array(scene.illuminant or np.eye(3).ravel(), np.float32).reshape(3, 3)
        tint = lamp.sum(1) * 3 / lamp.sum()
        out += tint * gs * np.exp(-(((xx - gu * w) / (0.08 * w)) ** 2 + ((yy - gv * h) / (0.08 * w)) ** 2))[..., None]
    if scene.auto_exposure:  # the camera's auto exposure (libcamera's default): the frame's mean brightness
        out *= float(np.clip(unlit / max(float(out.mean()), 1e-3), 0.6, 1.6))  # kept, within its range
    if scene.blur:
        out = np.asarray(cv2.GaussianBlur(out, (0, 0), scene.blur))
    if scene.tone != 1.0:
        out = 255 * (np.clip(out, 0, None) / 255) ** scene.tone
    out += scene.flare + rng.normal(0, scene.noise, out.shape).astype(np.float32)
    picture: np.ndarray = np.clip(out, 0, 255).astype(np.uint8)
    return picture


def _lens(picture: np.ndarray, camera: CameraModel) -> np.ndarray:
    """The pinhole *picture* as *camera*'s lens shows it (radial distortion); unchanged without one."""
    if not camera.distorted:
        return picture
    h, w = picture.shape[:2]
    grid = np.mgrid[0:h, 0:w][::-1].reshape(2, -1).T.astype(np.float64)  # every pixel of the lens's picture
    source = camera.undistort(grid).astype(np.float32).reshape(h, w, 2)  # where the pinhole shows it
    lensed: np.ndarray = cv2.remap(picture, source[..., 0], source[..., 1], cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_REPLICATE)
    return lensed


def _quiet_zone(marker: Marker) -> np.ndarray:
    """The white quiet zone around a marker (a quarter of its side on each edge)."""
    q = marker.size * 0.75
    return np.array([[marker.x - q, marker.y - q, 0], [marker.x + q, marker.y - q, 0],
                     [marker.x + q, marker.y + q, 0], [marker.x - q, marker.y + q, 0]])


def _place(rng: np.random.Generator, zone: Zone, count: int, r: float,
           taken: list[tuple[float, float]]) -> list[tuple[float, float]]:
    xs = [p[0] for p in zone.polygon]
    ys = [p[1] for p in zone.polygon]
    out: list[tuple[float, float]] = []
    for _ in range(200):
        if len(out) == count:
            break
        x, y = rng.uniform(min(xs) + r + 3, max(xs) - r - 3), rng.uniform(min(ys) + r + 3, max(ys) - r - 3)
        if all(math.hypot(x - a, y - b) > 2 * r + 10 for a, b in taken + out):
            out.append((x, y))
    return out


def _box(stack: Stack, layout: Layout, camera: CameraModel) -> np.ndarray:
    """Image bounding box (x0, y0, x1, y1) of a stack's silhouette."""
    r = layout.chip_diameter / 2
    a = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    ring = np.column_stack([stack.x + r * np.cos(a), stack.y + r * np.sin(a)])
    pts = np.vstack([np.hstack([ring, np.zeros((16, 1))]),
                     np.hstack([ring, np.full((16, 1), stack.count * layout.chip_thickness)])])
    uv = camera.project(pts)
    return np.concatenate([uv.min(0), uv.max(0)])


def apart(stacks: Iterable[Stack], layout: Layout, camera: CameraModel, gap: float = 6.0) -> tuple[Stack, ...]:
    """The stacks, dropping any whose silhouette would touch an earlier one's in the picture.

    The evaluation set keeps stacks apart as the camera sees them: the counter
    reads each stack's height from its own silhouette (see docs/vision.md).
    """
    kept: list[Stack] = []
    boxes: list[np.ndarray] = []
    for stack in stacks:
        b = _box(stack, layout, camera)
        if all(b[0] > o[2] + gap or o[0] > b[2] + gap or b[1] > o[3] + gap or o[1] > b[3] + gap for o in boxes):
            kept.append(stack)
            boxes.append(b)
    return tuple(kept)


def random_scene(rng: np.random.Generator, layout: Layout, colours: dict[int, str], max_stack: int = 12,
                 occupancy: float = 0.6, camera: CameraModel | None = None, tall: bool = False) -> Scene:
    """Random chips in the bet zones and the pot, random cards, under a random light (no arms). *tall*:
    stacks of 8 chips to the layout's ``max_stack`` (a casino's full stacks of 20), drawn evenly."""
    r = layout.chip_diameter / 2
    values = sorted(colours)
    stacks = []
    for zone in layout.zones:
        if zone.kind not in ("bet", "pot") or rng.random() > (0.9 if zone.kind == "pot" else occupancy):
            continue
        n = int(rng.integers(1, 5 if zone.kind == "pot" else 4))
        for x, y in _place(rng, zone, n, r, []):
            count = (int(rng.integers(8, layout.max_stack + 1)) if tall
                     else int(min(max_stack, 1 + rng.geometric(0.25))))
            stacks.append(Stack(round(x, 1), round(y, 1), int(rng.choice(values)), count))
    stacks = list(apart(stacks, layout, camera or mount_camera(layout)))
    cards = tuple((z.name, bool(rng.random() < 0.3)) for z in layout.zones
                  if z.kind == "cards" and rng.random() < 0.5)
    level = rng.uniform(0.7, 1.25)
    light = _gains(float(level * g) for g in rng.uniform(0.85, 1.15, 3))
    glare = (float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.2, 0.8)), float(rng.uniform(0, 45)))
    return Scene(tuple(stacks), cards, (), light, glare, float(rng.uniform(0.4, 1.1)),
                 float(rng.uniform(1.0, 4.0)), dict(colours))


def arm_mask(scene: Scene, camera: CameraModel, size: tuple[int, int] = (1280, 720)) -> np.ndarray:
    """Where the arms of *scene* cover the picture (bool h x w): ground truth for occlusion."""
    img = np.zeros((size[1] * SS, size[0] * SS, 3), np.uint8)
    for arm in scene.arms:
        _arm(img, dataclasses.replace(camera, dist=(0.0, 0.0)), dataclasses.replace(arm, skin=0, sleeve=0))
    pinhole = cv2.resize(img, size, interpolation=cv2.INTER_AREA).max(-1).astype(np.float32)
    covered: np.ndarray = _lens(pinhole, camera) > 0
    return covered


def zone_truth(scene: Scene, layout: Layout, camera: CameraModel,
               size: tuple[int, int] = (1280, 720)) -> dict[str, dict[str, Any]]:
    """Per chip zone: amount, chips (largest first), stacks and whether an arm is over it."""
    covered = arm_mask(scene, camera, size)
    out = {}
    for zone in layout.zones:
        if zone.kind not in ("bet", "pot"):
            continue
        stacks = [s for s in scene.stacks if zone.contains(s.x, s.y)]
        counts: dict[int, int] = {}
        for s in stacks:
            for v in s.chips:
                counts[v] = counts.get(v, 0) + 1
        poly = np.array(zone.polygon)
        top = np.hstack([poly, np.full((len(poly), 1), layout.chip_thickness * max([s.count for s in stacks] + [1]))])
        hull = cv2.convexHull(np.round(np.vstack([camera.project(poly), camera.project(top)])).astype(np.int32))
        mask = np.zeros(covered.shape, np.uint8)
        cv2.fillConvexPoly(mask, hull, 1)
        out[zone.name] = {
            "amount": sum(v * c for v, c in counts.items()),
            "chips": sorted(([v, c] for v, c in counts.items()), reverse=True),
            "stacks": [[s.x, s.y, list(s.chips)] for s in stacks],
            "occluded": bool((covered & mask.astype(bool)).any()),
        }
    return out


def eval_zones(truth: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """:func:`zone_truth` in the evaluation set's format (``docs/vision.md``): stacks bottom to top,
    amount, covered, and each stack's base (``at``, mm) for the denomination confusion."""
    return {name: {"amount": z["amount"], "stacks": [chips for _, _, chips in z["stacks"]],
                   "covered": z["occluded"], "at": [[x, y] for x, y, _ in z["stacks"]]}
            for name, z in truth.items()}


def eval_frame(file: str, camera: str, sequence: str, t: float, truth: dict[str, dict[str, Any]],
               cards: Iterable[tuple[str, bool]]) -> dict[str, Any]:
    """One frame's labels in the evaluation set's format (tags: ``usual``, and ``arm`` with one over a zone)."""
    zones = eval_zones(truth)
    tags = ["usual"] + (["arm"] if any(z["covered"] for z in zones.values()) else [])
    return {"file": file, "camera": camera, "sequence": sequence, "tags": tags, "t": t, "zones": zones,
            "cards": [[z, up] for z, up in cards]}


def _reach(rng: np.random.Generator, zone: Zone) -> tuple[np.ndarray, np.ndarray]:
    """Where an arm over *zone* comes from (beyond the rail) and the zone's centre."""
    centre = np.mean(zone.polygon, axis=0)
    start = centre * (1.9 if np.abs(centre).max() > 1 else 1) + rng.normal(0, 40, 2)
    if np.abs(centre).max() <= 1 or abs(centre[1]) < 200 and abs(centre[0]) < 300:  # the pot: from the dealer
        start = np.array([centre[0] + rng.normal(0, 60), -800.0])
    return np.clip(start, (-1150, -700), (1150, 700)), centre


def _arm_over(rng: np.random.Generator, zone: Zone, share: float) -> Arm:
    start, centre = _reach(rng, zone)
    tx, ty = start + (centre - start) * share
    return Arm(float(start[0]), float(start[1]), float(tx), float(ty), float(rng.uniform(60, 130)),
               int(rng.integers(4)), int(rng.integers(4)))


def sequence(rng: np.random.Generator, layout: Layout, colours: dict[int, str], frames: int = 10,
             tall: bool = False) -> list[Scene]:
    """A short scene of *frames* (at least 10): chips at rest (0-2); an arm over a chip zone adds a
    stack (3-5); rest (6); another arm passes over another zone (7); rest (8-). *tall*: as
    :func:`random_scene`."""
    base = random_scene(rng, layout, colours, tall=tall)
    chip_zones = [z for z in layout.zones if z.kind in ("bet", "pot")]
    first, second = (chip_zones[int(i)] for i in rng.choice(len(chip_zones), 2, replace=False))
    taken = [(s.x, s.y) for s in base.stacks if first.contains(s.x, s.y)]
    spot = _place(rng, first, 1, layout.chip_diameter / 2, taken)
    after = apart(base.stacks + ((Stack(round(spot[0][0], 1), round(spot[0][1], 1),
                                        int(rng.choice(sorted(colours))), int(rng.integers(1, 8))),) if spot else ()),
                  layout, mount_camera(layout))
    arms = {3: _arm_over(rng, first, 0.75), 4: _arm_over(rng, first, 1.0), 5: _arm_over(rng, first, 0.9),
            7: _arm_over(rng, second, 1.0)}
    scenes = []
    for k in range(frames):
        stacks = base.stacks if k < 5 else after
        flicker = _gains(float(g * rng.uniform(0.98, 1.02)) for g in base.light)
        arm = (arms[k],) if k in arms else ()
        scenes.append(dataclasses.replace(base, stacks=stacks, arms=arm, light=flicker))
    return scenes


HOUSE_004 = {50: "grey", 100: "red", 200: "green", 500: "blue", 1000: "black", 2000: "pink"}


def calibration_shows(layout: Layout, colours: dict[int, str], seed: int = 7,
                      betting_line: float = 0.0) -> dict[int, Scene]:
    """One scene per denomination: single chips of it in the camera's chip zones (four in
    the pot, two in each bet zone), as the camera sees them apart; with a printed *betting_line*
    (as ``Scene.betting_line``) on the felt, as the calibration asks: off the line."""
    rng = np.random.default_rng(seed)
    camera = mount_camera(layout)
    spots = []
    for zone in layout.zones:
        cx, cy = np.mean(zone.polygon, axis=0).round(1)
        if zone.kind == "pot":
            spots += [(cx - 120, cy - 40), (cx - 40, cy + 40), (cx + 50, cy - 40), (cx + 130, cy + 40)]
        elif zone.kind == "bet":
            spots += [(cx - 40, cy), (cx + 40, cy)]
    if betting_line:
        spots = [_off_line(x, y, layout, betting_line) for x, y in spots]
    shows = {}
    for value in sorted(colours):
        stacks = apart([Stack(float(x), float(y), value, 1) for x, y in spots], layout, camera)
        light = _gains(float(g) for g in rng.uniform(0.9, 1.1, 3))
        shows[value] = Scene(stacks=stacks, light=light, colours=dict(colours), noise=2.5,
                             betting_line=betting_line)
    return shows


def _off_line(x: float, y: float, layout: Layout, inset: float) -> tuple[float, float]:
    """A chip's place (x, y) moved across the straight sides of a betting line *inset* mm in from the
    felt's edge until the chip clears it by 6 mm (towards the table's middle)."""
    clear = layout.chip_diameter / 2 + LINE_MM / 2 + 6.0
    at = [x, y]
    for axis, half in ((0, layout.width / 2 - inset), (1, layout.depth / 2 - inset)):
        side = math.copysign(half, at[axis])
        if abs(at[axis] - side) < clear:
            at[axis] = side - math.copysign(clear, at[axis])
    return at[0], at[1]


def write_evaluation_set(out: str, layout_path: str, scenes: int = 8, frames: int = 10, seed: int = 2026) -> None:
    """Write the fixed evaluation set, per camera: its calibration pictures (``table_<camera>.jpg``,
    ``chips_<camera>_<value>.jpg``), *scenes* scenes of *frames* frames (JPEG 85) and ``labels.json``
    in the evaluation set's format (``docs/vision.md``)."""
    from pathlib import Path

    from calibration.geometry import load_layout
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    full = load_layout(layout_path)
    jpeg = [cv2.IMWRITE_JPEG_QUALITY, 85]
    rng = np.random.default_rng(seed)
    labels: dict[str, Any] = {"format": "pokertable-vision-eval/1", "profile": "004", "calibration": {},
                              "frames": []}
    for c, mount in enumerate(full.cameras):
        layout = full.view(mount.name)
        camera = mount_camera(layout)
        cv2.imwrite(str(out_dir / f"table_{mount.name}.jpg"), render(Scene(colours=HOUSE_004), layout, camera, seed=1),
                    jpeg)
        labels["calibration"][mount.name] = {"table": [f"table_{mount.name}.jpg"], "chips": {}}
        for value, scene in calibration_shows(layout, HOUSE_004).items():
            cv2.imwrite(str(out_dir / f"chips_{mount.name}_{value}.jpg"), render(scene, layout, camera, seed=value),
                        jpeg)
            labels["calibration"][mount.name]["chips"][str(value)] = f"chips_{mount.name}_{value}.jpg"
        for s in range(scenes):
            for k, scene in enumerate(sequence(rng, layout, HOUSE_004, frames)):
                name = f"{mount.name}_s{s:02d}_f{k}.jpg"
                cv2.imwrite(str(out_dir / name), render(scene, layout, camera, seed=100000 * c + 1000 * s + k), jpeg)
                labels["frames"].append(eval_frame(name, mount.name, f"{mount.name}-s{s:02d}", round(k / 10, 2),
                                                   zone_truth(scene, layout, camera), scene.cards))
    (out_dir / "labels.json").write_text(labels_text(labels), encoding="utf-8")


def write_video(path: str, layout_path: str, camera_name: str = "right", seconds: float = 4.0, fps: int = 10,
                seed: int = 11) -> None:
    """A short clip (mp4v) from one camera: chips at rest, an arm reaching in, a bet added."""
    from calibration.geometry import load_layout
    layout = load_layout(layout_path).view(camera_name)
    camera = mount_camera(layout)
    frames = int(seconds * fps)
    writer = cv2.VideoWriter(path, cv2.VideoWriter.fourcc(*"mp4v"), fps, layout.mount().size)
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write mp4v to {path}")
    try:
        for k, scene in enumerate(sequence(np.random.default_rng(seed), layout, HOUSE_004, frames)):
            writer.write(render(scene, layout, camera, seed=k))
    finally:
        writer.release()


def labels_text(labels: dict[str, Any]) -> str:
    """``labels.json``: one line per frame, so a diff shows which frames changed."""
    head = {k: v for k, v in labels.items() if k != "frames"}
    body = ",\n".join(json.dumps(frame, separators=(",", ":")) for frame in labels["frames"])
    return json.dumps(head, separators=(",", ":"))[:-1] + ',"frames":[\n' + body + "\n]}\n"


if __name__ == "__main__":  # python -m firmware_host.sim.render OUT_DIR LAYOUT
    import sys
    write_evaluation_set(sys.argv[1], sys.argv[2])
    write_video(f"{sys.argv[1]}/clip_right.mp4", sys.argv[2])
