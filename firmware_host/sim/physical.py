"""A physically based renderer of evaluation sets for the chip counter (Mitsuba 3, path tracing on the CPU).

``firmware_host.sim.render`` paints the table in 2D and is made by the same hands as the
counter; this module builds the same scenes in 3D and lets light transport make the picture:
emitters of a colour temperature (area panels, a pendant lamp, spot lights, flickering tubes),
a printed felt (lines and a logo in a bitmap, a Lambertian BSDF), the padded rail, chips as
cylinders (a face colour per denomination, striped inserts mapped around the edge, a printed
inlay or none, a glossy ``roughplastic``), stacks plain, leaning, mixed or touching, cards,
arms (sleeve and hand) with their shadows, the room around. The camera is the layout's
:class:`~calibration.geometry.CameraModel` exactly (the Mitsuba sensor is built from ``K``
and the pose), and the picture goes through a camera's pipeline: lens shading and blur, radial
distortion (the ``CameraModel.distort`` convention), auto exposure and white balance, an RGGB
Bayer mosaic with shot and read noise, demosaicking, the sRGB curve and JPEG.

Scenes and ground truth come from :mod:`firmware_host.sim.render` (``sequence``,
``calibration_shows``, its stack placement), never its drawing: the labels are exact. Each
session (a light, a felt, inlays or not, a lens) is one set in the evaluation format of
``docs/vision.md``: ``python -m firmware_host.sim.physical OUT [SESSION...]``, then
``tablectl vision evaluate OUT/SESSION`` (``docs/vision-eval.md``).

Mitsuba is imported only when rendering (``scalar_rgb``): the rest imports without it.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import math
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.geometry import CameraModel, Layout, load_layout
from calibration.mount import mount_camera
from firmware_host.sim import render
from firmware_host.sim.conditions import BEHIND_OFF

__all__ = ["LIGHTS", "SESSIONS", "Chip", "Session", "Sensor", "TallStack", "blackbody_rgb", "check_camera",
           "main", "sensor_dict", "srgb_to_linear", "write_session"]

VARIANT = "scalar_rgb"  # llvm_ad_rgb needs a newer LLVM than the system's 15
JPEG_QUALITY = 85
FELTS = {"felt-green": (22, 100, 48), "felt-blue": (30, 62, 125), "felt-burgundy": (110, 24, 40),
         "felt-grey": (78, 80, 84), "felt-beige": (196, 178, 140)}  # printed sRGB
INK = (205, 185, 120)  # the felt's printed lines and logo (sRGB)
ACCENTS = {"grey": (30, 30, 30), "red": (40, 70, 190), "green": (235, 220, 60), "blue": (200, 40, 40),
           "black": (60, 170, 80), "pink": (120, 40, 140), "white": (40, 70, 190), "yellow": (40, 70, 190),
           "purple": (235, 220, 60), "orange": (40, 40, 40), "brown": (235, 220, 60)}  # edge inserts' stripes (sRGB)
SPOT = (232, 232, 228)  # the inserts' white (sRGB)
SKIN = ((200, 150, 120), (170, 120, 90), (125, 85, 60), (215, 175, 150))
SLEEVE = ((40, 40, 40), (40, 90, 160), (200, 200, 200), (120, 40, 60))
TAGS = ("touching", "leaning", "mixed", "behind")


def srgb_to_linear(srgb: Iterable[float]) -> np.ndarray:
    """Printed sRGB (0-255) to linear reflectance.

    >>> srgb_to_linear([255, 128, 0]).round(3).tolist()
    [1.0, 0.216, 0.0]
    """
    c = np.asarray(list(srgb), np.float64) / 255
    out: np.ndarray = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return out


def linear_to_srgb(linear: np.ndarray) -> np.ndarray:
    """Linear values (0-1) to sRGB-encoded values (0-1)."""
    c = np.clip(linear, 0, 1)
    out: np.ndarray = np.where(c <= 0.0031308, 12.92 * c, 1.055 * np.power(c, 1 / 2.4) - 0.055)
    return out


def _lobe(lam: np.ndarray, mu: float, s1: float, s2: float) -> np.ndarray:
    s = np.where(lam < mu, s1, s2)
    out: np.ndarray = np.exp(-0.5 * ((lam - mu) / s) ** 2)
    return out


def _cmf(lam: np.ndarray) -> np.ndarray:
    """CIE 1931 colour matching functions, the multi-lobe fit of Wyman, Sloan and Shirley (2013)."""
    x = 1.056 * _lobe(lam, 599.8, 37.9, 31.0) + 0.362 * _lobe(lam, 442.0, 16.0, 26.7) \
        - 0.065 * _lobe(lam, 501.1, 20.4, 26.2)
    y = 0.821 * _lobe(lam, 568.8, 46.9, 40.5) + 0.286 * _lobe(lam, 530.9, 16.3, 31.1)
    z = 1.217 * _lobe(lam, 437.0, 11.8, 36.0) + 0.681 * _lobe(lam, 459.0, 26.0, 13.8)
    return np.stack([x, y, z])


XYZ_TO_SRGB = np.array([[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415], [0.0557, -0.2040, 1.0570]])


def blackbody_rgb(kelvin: float) -> np.ndarray:
    """The linear sRGB colour of a black body at *kelvin* (Planck's law through the CIE 1931
    observer), scaled to luminance 1: the light of a lamp of that colour temperature.

    >>> r, g, b = blackbody_rgb(2800)
    >>> bool(r > 1.3 > g > b > 0), round(float(0.2126 * r + 0.7152 * g + 0.0722 * b), 3)
    (True, 1.0)
    >>> bool(np.ptp(blackbody_rgb(6500)) < 0.12)
    True
    """
    lam = np.arange(380.0, 781.0, 2.0)
    metres = lam * 1e-9
    planck = 1 / (metres ** 5 * (np.exp(1.4388e-2 / (metres * kelvin)) - 1))
    xyz = (_cmf(lam) * planck).sum(1)
    rgb = np.clip(XYZ_TO_SRGB @ (xyz / xyz[1]), 0, None)
    out: np.ndarray = rgb / (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2])
    return out


# -- sessions -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """One set: a light, a felt, chips with or without inlay, a lens, the stack variants it adds."""

    light: str
    felt: str = "felt-green"
    inlay: bool = True
    distortion: tuple[float, float] = (0.0, 0.0)
    variants: tuple[str, ...] = ()
    seed: int = 1
    shades: int = 0  # another maker's chips: each colour's shade drawn with this seed (0: the named colours)
    behind_off: float = BEHIND_OFF  # degrees: how far off the camera's line of sight a chip behind a stack lies
    tall: bool = False  # stacks of 8 chips to the layout's max_stack (render.random_scene)

    @property
    def tags(self) -> list[str]:
        """The conditions every frame of the session has."""
        tags = [self.light, self.felt, "inlay" if self.inlay else "no-inlay"] + (["shades"] if self.shades else [])
        tags += ["distortion"] if self.distortion != (0.0, 0.0) else []
        tags += ["tall"] if self.tall else []
        return tags + (["bands"] if "bands" in LIGHTS[self.light] else [])


SESSIONS = {
    "cool-bright": Session("cool-bright", "felt-green", True, variants=("mixed",), seed=11),
    "dim-warm": Session("dim-warm", "felt-green", False, variants=("leaning",), seed=12),
    "spots-blue": Session("spots", "felt-blue", True, variants=("touching",), seed=13),
    "spots-green": Session("spots", "felt-green", True, variants=("touching",), seed=16),
    "flicker-lens": Session("flicker", "felt-green", False, (-0.1, 0.0), variants=("mixed", "leaning"), seed=14),
    "cool-burgundy": Session("cool-bright", "felt-burgundy", True, variants=("touching", "leaning"), seed=15),
    "cool-touching": Session("cool-bright", "felt-green", True, variants=("touching",), seed=17),
    "cool-behind": Session("cool-bright", "felt-green", True, variants=("behind",), seed=18),
    "cool-behind-close": Session("cool-bright", "felt-green", True, variants=("behind",), seed=19, behind_off=10.0),
}

# Each light: its emitters' colour temperature and the level on the felt (the white patch's radiance, about 1
# under cool-bright): the sensor's photon budget follows it (a dim room is a noisier picture).
LIGHTS: dict[str, dict[str, Any]] = {
    "cool-bright": {"kelvin": 6000, "level": 1.0},
    "dim-warm": {"kelvin": 2800, "level": 0.15},
    "spots": {"kelvin": 3000, "fill_kelvin": 4500, "level": 0.5},
    "flicker": {"kelvin": 4000, "level": 0.6, "flicker": 0.15, "bands": 0.06},
}


# -- chips and stacks -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """One chip of a stack: its value, its offset from the stack's axis (mm), tilt (rad, towards *lean*), spin."""

    value: int
    dx: float = 0.0
    dy: float = 0.0
    tilt: float = 0.0
    lean: float = 0.0
    spin: float = 0.0


@dataclass(frozen=True)
class TallStack:
    """A stack as built: its base at (x, y) mm, its chips bottom to top, and what kind it is."""

    x: float
    y: float
    chips: tuple[Chip, ...]
    kind: str = "plain"  # plain, leaning, mixed, touching

    @property
    def values(self) -> list[int]:
        return [c.value for c in self.chips]


def _plain(stack: render.Stack, rng: np.random.Generator, kind: str = "plain",
           values: Sequence[int] | None = None) -> TallStack:
    """A stack as a dealer leaves it: each chip within about 0.5 mm of the axis, spun at random."""
    values = list(values) if values is not None else [stack.value] * stack.count
    chips = []
    for k, v in enumerate(values):
        dx, dy = (float(d) for d in rng.normal(0, 0.35, 2)) if k else (0.0, 0.0)
        chips.append(Chip(v, dx, dy, spin=float(rng.uniform(0, 2 * math.pi))))
    return TallStack(stack.x, stack.y, tuple(chips), kind)


def _leaning(stack: render.Stack, rng: np.random.Generator) -> TallStack:
    """Each chip shifted a little further one way (a few mm at the top) and tilted by up to 2 degrees."""
    count = max(stack.count, 4)
    lean, step = float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(0.25, 0.55))
    tilt = math.radians(float(rng.uniform(0.5, 2.0)))
    chips = []
    for k in range(count):
        shift = k * step + (rng.normal(0, 0.25) if k else 0.0)
        chips.append(Chip(stack.value, shift * math.cos(lean), shift * math.sin(lean), tilt if k else 0.0, lean,
                          float(rng.uniform(0, 2 * math.pi))))
    return TallStack(stack.x, stack.y, tuple(chips), "leaning")


def _mixed(stack: render.Stack, rng: np.random.Generator, values: Sequence[int]) -> TallStack:
    """Two or three runs of different denominations, bottom to top."""
    count = max(stack.count, 3)
    runs = int(rng.integers(2, min(3, count) + 1))
    cuts = sorted(int(c) for c in rng.choice(np.arange(1, count), runs - 1, replace=False))
    kinds = [int(v) for v in rng.choice(values, runs, replace=False)]
    if stack.value not in kinds:
        kinds[-1] = stack.value
    chips = [kinds[sum(k >= c for c in cuts)] for k in range(count)]
    return _plain(stack, rng, "mixed", chips)


def _neighbour(stack: render.Stack, zone: Any, rng: np.random.Generator, values: Sequence[int],
               others: Sequence[tuple[float, float]], r: float, angle: Callable[[], float],
               counts: tuple[int, int], kind: str) -> TallStack | None:
    """A stack of one denomination and *counts* chips (low, high exclusive) in contact with *stack* (0.3 mm
    apart), in the direction *angle* draws (radians), inside its zone and clear of *others*; or None if 24
    draws find no room."""
    for _ in range(24):
        a = angle()
        x, y = stack.x + (2 * r + 0.3) * math.cos(a), stack.y + (2 * r + 0.3) * math.sin(a)
        if zone.inside(x, y) < r + 4 or any(math.hypot(x - ox, y - oy) < 2 * r + 4 for ox, oy in others):
            continue
        neighbour = render.Stack(round(x, 1), round(y, 1), int(rng.choice(values)), int(rng.integers(*counts)))
        return _plain(neighbour, rng, kind)
    return None


def _touching(stack: render.Stack, zone: Any, rng: np.random.Generator, values: Sequence[int],
              others: Sequence[tuple[float, float]], r: float) -> TallStack | None:
    """A second stack (1-8 chips) in contact with *stack* inside its zone, or None if there is no room."""
    return _neighbour(stack, zone, rng, values, others, r, lambda: float(rng.uniform(0, 2 * math.pi)), (1, 9),
                      "touching")


def _behind(stack: render.Stack, zone: Any, rng: np.random.Generator, values: Sequence[int],
            others: Sequence[tuple[float, float]], r: float, eye: Sequence[float],
            off: float = BEHIND_OFF) -> TallStack | None:
    """One chip, or a stack of two, touching *stack* behind it as the camera at *eye* (table mm) sees it, up
    to *off* degrees off its line of sight, inside its zone; or None if there is no room (the renderer's
    ``behind`` condition, in 3D: docs/vision.md, "A chip wholly hidden behind a stack")."""
    sight = math.atan2(stack.y - eye[1], stack.x - eye[0])
    return _neighbour(stack, zone, rng, values, others, r,
                      lambda: sight + math.radians(float(rng.uniform(-off, off))), (1, 3), "behind")


def build_stacks(scenes: Sequence[render.Scene], layout: Layout, variants: Sequence[str], rng: np.random.Generator,
                 share: float = 0.5, eye: Sequence[float] = (0.0, 0.0),
                 behind_off: float = BEHIND_OFF) -> list[list[TallStack]]:
    """Each frame's stacks as built in 3D: every stack of the sequence the same way in every frame it is in,
    about *share* of them made one of *variants* (a touching stack adds a neighbour; a stack of two chips
    or more ``behind`` gets chips touching it behind as the camera at *eye*, table mm, sees it, up to
    *behind_off* degrees off its line of sight)."""
    values = sorted(render.HOUSE_004)
    r = layout.chip_diameter / 2
    built: dict[render.Stack, list[TallStack]] = {}
    everything = [s for scene in scenes for s in scene.stacks]
    for stack in dict.fromkeys(everything):
        kind = str(rng.choice(list(variants))) if variants and rng.random() < share else "plain"
        if kind == "leaning":
            built[stack] = [_leaning(stack, rng)]
        elif kind == "mixed":
            built[stack] = [_mixed(stack, rng, values)]
        elif kind == "touching":
            zone = next(z for z in layout.zones if z.contains(stack.x, stack.y))
            others = [(s.x, s.y) for s in everything if s != stack] + [(t.x, t.y) for b in built.values() for t in b]
            pair = _touching(stack, zone, rng, values, others, r)
            built[stack] = [_plain(stack, rng, "touching" if pair else "plain")] + ([pair] if pair else [])
        elif kind == "behind" and stack.count >= 2:
            zone = next(z for z in layout.zones if z.contains(stack.x, stack.y))
            others = [(s.x, s.y) for s in everything if s != stack] + [(t.x, t.y) for b in built.values() for t in b]
            pair = _behind(stack, zone, rng, values, others, r, eye, behind_off)
            built[stack] = [_plain(stack, rng, "behind" if pair else "plain")] + ([pair] if pair else [])
        else:
            built[stack] = [_plain(stack, rng)]
    return [[t for s in scene.stacks for t in built[s]] for scene in scenes]


# -- ground truth -----------------------------------------------------------------------------------------------


def _arm_parts(arm: render.Arm) -> list[tuple[np.ndarray, float, np.ndarray, float]]:
    """The arm as two convex solids: the sleeve (a frustum from the rail to the wrist) and the hand
    (an ellipsoid), each as (start, radius, end, radius) of its axis; the hand's radii are its semi-axes."""
    p0, p1 = np.array([arm.x0, arm.y0]), np.array([arm.x1, arm.y1])
    d = (p1 - p0) / max(float(np.linalg.norm(p1 - p0)), 1e-6)
    wrist = p1 - d * 60
    start = np.array([*p0, arm.height + 120.0])
    end = np.array([*wrist, arm.height + 10.0])
    return [(start, 50.0, end, 38.0), (np.array([*p1, arm.height]), 0.0, d, 0.0)]


def _frame_of(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors perpendicular to *axis* and to each other."""
    axis = axis / np.linalg.norm(axis)
    helper = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(axis, helper)
    u /= np.linalg.norm(u)
    return u, np.cross(axis, u)


def sleeve_mesh(start: np.ndarray, r0: float, end: np.ndarray, r1: float, n: int = 24,
                rings: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """A closed frustum from *start* (radius *r0*) to *end* (radius *r1*): vertices and triangles."""
    u, v = _frame_of(end - start)
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    verts = []
    for k in range(rings + 1):
        s = k / rings
        c, rad = start + (end - start) * s, r0 + (r1 - r0) * s
        verts += [c + rad * (math.cos(t) * u + math.sin(t) * v) for t in a]
    verts += [start, end]
    faces = []
    for k in range(rings):
        for i in range(n):
            p, q = k * n + i, k * n + (i + 1) % n
            faces += [(p, q + n, q), (p, p + n, q + n)]
    s0, s1 = len(verts) - 2, len(verts) - 1
    faces += [(s0, (i + 1) % n, i) for i in range(n)] + [(s1, rings * n + i, rings * n + (i + 1) % n) for i in range(n)]
    return np.array(verts), np.array(faces)


def hand_mesh(centre: np.ndarray, along: np.ndarray, n: int = 24, rings: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """The hand: an ellipsoid 150 x 90 x 36 mm, its long axis along *along* (a 2D direction)."""
    d = np.array([along[0], along[1], 0.0])
    d /= np.linalg.norm(d)
    side = np.array([-d[1], d[0], 0.0])
    up = np.array([0.0, 0.0, 1.0])
    verts = [centre - 18 * up]
    for k in range(1, rings):
        th = math.pi * k / rings
        for i in range(n):
            ph = 2 * math.pi * i / n
            verts.append(centre + 75 * math.sin(th) * math.cos(ph) * d + 45 * math.sin(th) * math.sin(ph) * side
                         - 18 * math.cos(th) * up)
    verts.append(centre + 18 * up)
    faces = [(0, 1 + (i + 1) % n, 1 + i) for i in range(n)]
    for k in range(rings - 2):
        for i in range(n):
            p, q = 1 + k * n + i, 1 + k * n + (i + 1) % n
            faces += [(p, q, q + n), (p, q + n, p + n)]
    top, last = len(verts) - 1, 1 + (rings - 2) * n
    faces += [(top, last + i, last + (i + 1) % n) for i in range(n)]
    return np.array(verts), np.array(faces)


def arm_meshes(arm: render.Arm) -> list[tuple[np.ndarray, np.ndarray]]:
    """The sleeve's and the hand's meshes of *arm*."""
    (start, r0, end, r1), (centre, _, along, _) = _arm_parts(arm)
    return [sleeve_mesh(start, r0, end, r1), hand_mesh(centre, along)]


def picture_size(camera: CameraModel) -> tuple[int, int]:
    """The width and height of *camera*'s pictures: a mount's camera is centred on its picture
    (``CameraModel.looking_at``)."""
    return int(round(2 * camera.K[0, 2])), int(round(2 * camera.K[1, 2]))


def arm_mask(arms: Iterable[render.Arm], camera: CameraModel) -> np.ndarray:
    """Where the arms cover the picture (bool h x w): each solid's silhouette is the hull of its
    vertices in front of the camera, through the lens."""
    size = picture_size(camera)
    mask = np.zeros((size[1], size[0]), np.uint8)
    for arm in arms:
        for verts, _ in arm_meshes(arm):
            depth = (camera.R @ verts.T + camera.tvec).reshape(3, -1)[2]
            front = verts[depth > 20]
            if len(front) >= 3:
                hull = cv2.convexHull(np.round(camera.project(front)).astype(np.int32))
                cv2.fillConvexPoly(mask, hull, 1)
    covered: np.ndarray = mask > 0
    return covered


def truth(stacks: Sequence[TallStack], arms: Iterable[render.Arm], layout: Layout,
          camera: CameraModel) -> dict[str, dict[str, Any]]:
    """Per chip zone of the view, in the evaluation format: amount, stacks bottom to top, covered (an arm
    over the zone's image, up to its tallest stack, as ``render.zone_truth``), each stack's base (``at``)."""
    covered = arm_mask(arms, camera)
    out = {}
    for zone in layout.zones:
        if zone.kind not in ("bet", "pot"):
            continue
        inside = [s for s in stacks if zone.contains(s.x, s.y)]
        poly = np.array(zone.polygon)
        height = layout.chip_thickness * max([len(s.chips) for s in inside] + [1])
        top = np.hstack([poly, np.full((len(poly), 1), height)])
        hull = cv2.convexHull(np.round(np.vstack([camera.project(poly), camera.project(top)])).astype(np.int32))
        mask = np.zeros(covered.shape, np.uint8)
        cv2.fillConvexPoly(mask, hull, 1)
        out[zone.name] = {"amount": sum(sum(s.values) for s in inside), "stacks": [s.values for s in inside],
                          "covered": bool((covered & mask.astype(bool)).any()),
                          "at": [[s.x, s.y] for s in inside], "kinds": sorted({s.kind for s in inside})}
    return out


# -- pictures on the felt ---------------------------------------------------------------------------------------

PX_PER_MM = 2.0


def felt_texture(layout: Layout, felt: str, rng: np.random.Generator) -> np.ndarray:
    """The printed felt (linear RGB, float32, row 0 at the far side +y): its colour with the fibres' grain
    and a slow mottle, a betting line 60 mm inside the edge and a logo between the board and the far side."""
    w, h = int(layout.width * PX_PER_MM), int(layout.depth * PX_PER_MM)
    base = srgb_to_linear(FELTS[felt]).astype(np.float32)
    grain = rng.lognormal(0, 0.05, (h, w)).astype(np.float32)
    mottle = cv2.GaussianBlur(rng.normal(0, 1, (h // 8, w // 8)).astype(np.float32), (0, 0), 6)
    mottle = cv2.resize(1 + 0.04 * mottle / max(float(mottle.std()), 1e-6), (w, h))
    ink = np.zeros((h, w), np.uint8)

    def px(x: float, y: float) -> tuple[int, int]:
        return int(round((x + layout.width / 2) * PX_PER_MM)), int(round((layout.depth / 2 - y) * PX_PER_MM))

    line = render.rounded_rect(layout.width / 2 - 60, layout.depth / 2 - 60, layout.corner_radius - 60)
    cv2.polylines(ink, [np.array([px(x, y) for x, y in line], np.int32)], True, 255, int(6 * PX_PER_MM), cv2.LINE_AA)
    cv2.ellipse(ink, px(0, 235), (int(140 * PX_PER_MM), int(55 * PX_PER_MM)), 0, 0, 360, 255, int(5 * PX_PER_MM),
                cv2.LINE_AA)
    text, font, scale = "ROYAL DEAUVILLE", cv2.FONT_HERSHEY_TRIPLEX, 1.55 * PX_PER_MM
    (tw, th), _ = cv2.getTextSize(text, font, scale, int(3 * PX_PER_MM))
    cx, cy = px(0, 235)
    cv2.putText(ink, text, (cx - tw // 2, cy + th // 2), font, scale, 255, int(3 * PX_PER_MM), cv2.LINE_AA)
    a = (ink.astype(np.float32) / 255 * 0.85)[..., None]
    felt_rgb = base * (grain * mottle)[..., None]
    out: np.ndarray = (felt_rgb * (1 - a) + srgb_to_linear(INK).astype(np.float32) * a * grain[..., None])
    return out.astype(np.float32)


def marker_texture(layout: Layout, marker_id: int) -> np.ndarray:
    """An ArUco marker (the layout's dictionary) with its white quiet zone, a quarter of its side each edge
    (linear reflectance: paper 0.85, ink 0.03)."""
    cell = 40
    marker = cv2.aruco.generateImageMarker(layout.aruco_dictionary(), marker_id, 6 * cell)
    paper = np.pad(marker, 3 * cell // 2, constant_values=255).astype(np.float32) / 255
    grey = 0.03 + 0.82 * paper
    return np.repeat(grey[..., None], 3, axis=2).astype(np.float32)


def card_texture(face_up: bool, rng: np.random.Generator) -> np.ndarray:
    """A playing card 63 x 88 mm (linear RGB): a rank and a pip face up, a red patterned back face down."""
    card = np.full((352, 252, 3), 242, np.uint8)
    if face_up:
        colour = (200, 30, 30) if rng.random() < 0.5 else (20, 20, 20)
        cv2.putText(card, "AKQJT98765432"[int(rng.integers(13))], (14, 66), cv2.FONT_HERSHEY_SIMPLEX, 2.2, colour, 6)
        cv2.circle(card, (126, 176), 44, colour, -1)
    else:
        cv2.rectangle(card, (16, 16), (235, 335), (150, 40, 40), -1)
        for k in range(-352, 352, 28):
            cv2.line(card, (16, 16 + k), (235, 235 + k), (200, 80, 80), 6)
        cv2.rectangle(card, (0, 0), (251, 351), (242, 242, 242), 16)
    return srgb_to_linear(card.reshape(-1, 3).T).T.reshape(card.shape).astype(np.float32)


def shade(srgb: Sequence[int], rng: np.random.Generator) -> tuple[int, int, int]:
    """Another maker's shade of a colour (sRGB): its hue turned up to 12 degrees, its saturation and its
    value each scaled by 0.75-1.25 (a grey stays grey, a black black)."""
    hsv = cv2.cvtColor(np.array([[srgb]], np.uint8), cv2.COLOR_RGB2HSV_FULL)[0, 0].astype(np.float64)
    hsv += (rng.uniform(-12, 12) * 256 / 360, 0, 0)
    hsv[0] %= 256
    hsv[1:] *= rng.uniform(0.75, 1.25, 2)
    out = cv2.cvtColor(np.clip(np.round(hsv), 0, 255).astype(np.uint8)[None, None], cv2.COLOR_HSV2RGB_FULL)[0, 0]
    return int(out[0]), int(out[1]), int(out[2])


def chip_textures(colour: str, inlay: float, rng: np.random.Generator,
                  face_srgb: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A chip's top face (square, the face's disc inscribed; row 0 towards +y) and its edge (around the
    chip left to right, row 0 at the top): the face colour (*face_srgb*, default the colour's named one), six
    inserts of white and accent stripes at the rim and on the edge, and on the top a printed inlay *inlay*
    brighter than the face (0: none)."""
    face = srgb_to_linear(face_srgb or render.CHIP_COLOURS[colour][::-1]).astype(np.float32)
    white, accent = srgb_to_linear(SPOT).astype(np.float32), srgb_to_linear(ACCENTS[colour]).astype(np.float32)
    s, r = 512, 256
    top = np.tile(face, (s, s, 1))
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    rho, phi = np.hypot(xx - r + 0.5, r - 0.5 - yy) / r, np.arctan2(r - 0.5 - yy, xx - r + 0.5)
    insert = (np.mod(phi, math.pi / 3) - math.pi / 6) / 0.13  # -1..1 across an insert
    on = (np.abs(insert) < 1) & (rho > 0.80)
    top[on] = np.where((np.abs(insert[on]) < 0.34)[:, None], accent, white)
    if inlay:
        centre = rho < 0.5
        top[centre] = np.clip(face * (1 + inlay) + 0.01 * inlay, 0, 1)
        ring = np.abs(rho - 0.52) < 0.015
        top[ring] = face * (1 + inlay / 2)
    grain = rng.normal(1, 0.015, (s, s, 1)).astype(np.float32)
    edge_w, edge_h = 1024, 32
    u = (np.arange(edge_w, dtype=np.float32) + 0.5) / edge_w * 2 * math.pi
    across = (np.mod(u, math.pi / 3) - math.pi / 6) / 0.13
    edge = np.tile(face, (edge_h, edge_w, 1))
    stripes = np.where((np.abs(across) < 0.34)[:, None], accent, white)
    cols = np.abs(across) < 1
    edge[:, cols] = stripes[cols][None]
    return (top * grain).astype(np.float32), edge.astype(np.float32)


# -- meshes ---------------------------------------------------------------------------------------------------


def write_obj(path: Path, verts: np.ndarray, faces: np.ndarray, uv: np.ndarray | None = None,
              normals: np.ndarray | None = None) -> Path:
    """A Wavefront OBJ (the texture's row 0 at v = 1, the OBJ convention Mitsuba reads by default)."""
    lines = [f"v {x:.4f} {y:.4f} {z:.4f}" for x, y, z in verts]
    lines += [f"vt {u:.6f} {v:.6f}" for u, v in (uv if uv is not None else ())]
    lines += [f"vn {x:.5f} {y:.5f} {z:.5f}" for x, y, z in (normals if normals is not None else ())]

    def ref(i: int) -> str:
        return f"{i}/{i if uv is not None else ''}/{i}" if normals is not None else (f"{i}/{i}" if uv is not None
                                                                                     else f"{i}")
    lines += ["f " + " ".join(ref(int(i) + 1) for i in face) for face in faces]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return path


def chip_meshes(folder: Path, radius: float, thickness: float, n: int = 96) -> tuple[Path, Path]:
    """A chip's edge (an open cylinder, u around from +x counter-clockwise, v up) and its top face (a disc at
    *thickness*, planar uv), its base at the origin."""
    a = np.arange(n + 1) * 2 * math.pi / n
    ring = np.column_stack([np.cos(a), np.sin(a)])
    verts = np.vstack([np.column_stack([radius * ring, np.zeros(n + 1)]),
                       np.column_stack([radius * ring, np.full(n + 1, thickness)])])
    uv = np.vstack([np.column_stack([a / (2 * math.pi), np.zeros(n + 1)]),
                    np.column_stack([a / (2 * math.pi), np.ones(n + 1)])])
    normals = np.vstack([np.column_stack([ring, np.zeros(n + 1)])] * 2)
    faces = [(i, i + 1, n + 2 + i) for i in range(n)] + [(i, n + 2 + i, n + 1 + i) for i in range(n)]
    edge = write_obj(folder / "chip-edge.obj", verts, np.array(faces), uv, normals)
    disc = np.vstack([[0.0, 0.0, thickness], np.column_stack([radius * ring[:n], np.full(n, thickness)])])
    disc_uv = np.vstack([[0.5, 0.5], 0.5 + 0.5 * ring[:n]])
    up = np.tile([0.0, 0.0, 1.0], (n + 1, 1))
    top = write_obj(folder / "chip-top.obj", disc, np.array([(0, 1 + i, 1 + (i + 1) % n) for i in range(n)]),
                    disc_uv, up)
    return edge, top


def quad(folder: Path, name: str, corners: np.ndarray, z: float) -> Path:
    """A flat quad at height *z* whose texture's top-left, top-right, bottom-right, bottom-left corners lie
    at *corners* (4 x 2 mm)."""
    verts = np.column_stack([corners, np.full(4, z)])
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float64)
    return write_obj(folder / f"{name}.obj", verts, np.array([(0, 3, 2), (0, 2, 1)]), uv,
                     np.tile([0.0, 0.0, 1.0], (4, 1)))


def felt_mesh(folder: Path, layout: Layout) -> Path:
    """The felt: the rounded rectangle of the layout, a fan from its centre, uv over its bounding box."""
    outline = render.rounded_rect(layout.width / 2, layout.depth / 2, layout.corner_radius)
    verts = np.vstack([[0.0, 0.0], outline])
    uv = np.column_stack([verts[:, 0] / layout.width + 0.5, verts[:, 1] / layout.depth + 0.5])
    n = len(outline)
    faces = np.array([(0, 1 + i, 1 + (i + 1) % n) for i in range(n)])
    return write_obj(folder / "felt.obj", np.column_stack([verts, np.zeros(len(verts))]), faces, uv,
                     np.tile([0.0, 0.0, 1.0], (len(verts), 1)))


def rail_mesh(folder: Path, layout: Layout) -> Path:
    """The padded rail around the felt: rings of the felt's outline pushed out and up (a cushion 115 mm
    wide, 50 mm high)."""
    profile = [(0, 0), (4, 22), (16, 40), (40, 50), (75, 46), (100, 30), (115, 0), (115, -60)]
    rings = [np.column_stack([render.rounded_rect(layout.width / 2 + d, layout.depth / 2 + d, layout.corner_radius + d),
                              np.full(100, float(z))]) for d, z in profile]
    n = len(rings[0])
    faces = [(k * n + i, k * n + (i + 1) % n, (k + 1) * n + (i + 1) % n) for k in range(len(rings) - 1)
             for i in range(n)]
    faces += [(k * n + i, (k + 1) * n + (i + 1) % n, (k + 1) * n + i) for k in range(len(rings) - 1) for i in range(n)]
    return write_obj(folder / "rail.obj", np.vstack(rings), np.array(faces))


# -- the Mitsuba scene ------------------------------------------------------------------------------------------


def mitsuba() -> Any:
    """Mitsuba 3, its ``scalar_rgb`` variant set (imported here: the package does not need it)."""
    mi = importlib.import_module("mitsuba")
    if mi.variant() != VARIANT:
        mi.set_variant(VARIANT)
    return mi


def sensor_dict(camera: CameraModel, size: tuple[int, int], spp: int, margin: tuple[int, int] = (0, 0)) -> dict:
    """The Mitsuba perspective sensor of *camera* (its pinhole part), on a film *margin* wider on each side.

    OpenCV's camera looks along +z with x right and y down; Mitsuba's ``look_at`` takes the up vector (-y).
    The field of view comes from ``K[0, 0]`` and the film's width; Mitsuba's principal point is the film's
    centre between pixels, OpenCV's ``K[:2, 2]`` is at pixel centres: the offsets make them one."""
    mi = mitsuba()
    w, h = size[0] + 2 * margin[0], size[1] + 2 * margin[1]
    R = camera.R
    centre = camera.position()
    fov = math.degrees(2 * math.atan(w / 2 / camera.K[0, 0]))
    ox = -(camera.K[0, 2] + margin[0] - w / 2 + 0.5) / w
    oy = -(camera.K[1, 2] + margin[1] - h / 2 + 0.5) / h
    to_world = mi.ScalarTransform4f().look_at(origin=centre.tolist(), target=(centre + R[2]).tolist(),
                                              up=(-R[1]).tolist())
    return {"type": "perspective", "fov": fov, "fov_axis": "x", "principal_point_offset_x": ox,
            "principal_point_offset_y": oy, "to_world": to_world, "near_clip": 10.0, "far_clip": 1e5,
            "film": {"type": "hdrfilm", "width": w, "height": h, "pixel_format": "rgb",
                     "rfilter": {"type": "box"}},
            "sampler": {"type": "multijitter", "sample_count": spp}}


def _rgb(value: Iterable[float]) -> dict:
    return {"type": "rgb", "value": [float(v) for v in value]}


def _bitmap(mi: Any, picture: np.ndarray, nearest: bool = False) -> dict:
    return {"type": "bitmap", "bitmap": mi.Bitmap(np.ascontiguousarray(picture, np.float32)),
            "filter_type": "nearest" if nearest else "bilinear", "wrap_mode": "clamp", "raw": True}


def lights(light: str, level: float, rng: np.random.Generator) -> list[dict[str, dict]]:
    """The emitters of *light* (``LIGHTS``) at *level* times their usual output, in passes rendered apart
    and added (light adds up): Mitsuba picks one emitter at random per shadow ray, so spots that each light
    their own pool are rendered one by one, else the pools come out as noise."""
    mi = mitsuba()
    colour = blackbody_rgb(LIGHTS[light]["kelvin"])
    T = mi.ScalarTransform4f

    def panel(centre: tuple[float, float, float], sx: float, sy: float, radiance: np.ndarray,
              shape: str = "rectangle") -> dict:
        to_world = T().translate(list(centre)) @ T().rotate([1, 0, 0], 180) @ T().scale([sx / 2, sy / 2, 1])
        return {"type": shape, "to_world": to_world, "emitter": {"type": "area", "radiance": _rgb(radiance)},
                "bsdf": {"type": "diffuse", "reflectance": _rgb([0.8, 0.8, 0.8])}}

    if light == "cool-bright":  # three ceiling panels, 6000 K
        return [{f"panel{i}": panel((x, 0, 1500), 600, 600, colour * 10.5 * level)
                 for i, x in enumerate((-750, 0, 750))}]
    if light == "dim-warm":  # a pendant lamp's two shades low over the table, 2800 K
        return [{f"lamp{i}": panel((x, 60, 850), 320, 320, colour * 5.3 * level, shape="disk")
                 for i, x in enumerate((-420, 420))}]
    if light == "spots":  # halogen spots (3000 K) over a dim cooler fill (4500 K)
        fill = blackbody_rgb(LIGHTS[light]["fill_kelvin"])
        passes = [{f"fill{i}": panel((x, 0, 1500), 600, 600, fill * 2.0 * level) for i, x in enumerate((-750, 750))}]
        for i, (x, y) in enumerate(((-620, -230), (-280, 250), (20, -160), (480, 180))):
            target = np.array([x, y, 0.0]) + rng.normal(0, 40, 3) * (1, 1, 0)
            source = target + (rng.normal(0, 150), rng.normal(0, 150), 1400.0)
            passes.append({f"spot{i}": {"type": "spot", "cutoff_angle": 14.0, "beam_width": 7.0,
                                        "intensity": _rgb(colour * 4.0e6 * level),
                                        "to_world": T().look_at(origin=source.tolist(), target=target.tolist(),
                                                                up=[0, 1, 0])}})
        return passes
    if light == "flicker":  # two fluorescent tubes, 4000 K, flickering with the mains
        return [{f"tube{i}": panel((0, y, 1300), 1500, 140, colour * 14.0 * level) for i, y in enumerate((-300, 300))}]
    raise ValueError(f"no light {light!r} (lights: {', '.join(LIGHTS)})")


def room() -> dict[str, dict]:
    """The floor, walls and ceiling around the table (dull, for the light they send back and the background)."""
    mi = mitsuba()
    T = mi.ScalarTransform4f
    wall = {"type": "diffuse", "reflectance": _rgb([0.30, 0.28, 0.25])}
    out = {"floor": {"type": "rectangle", "to_world": T().translate([0, 0, -760]) @ T().scale([4500, 4500, 1]),
                     "bsdf": {"type": "diffuse", "reflectance": _rgb([0.06, 0.05, 0.05])}},
           "ceiling": {"type": "rectangle", "to_world": T().translate([0, 0, 2000]) @ T().rotate([1, 0, 0], 180)
                       @ T().scale([4500, 4500, 1]), "bsdf": wall}}
    for i, (axis, angle, pos) in enumerate((([1, 0, 0], 90, [0, 4500, 620]), ([1, 0, 0], -90, [0, -4500, 620]),
                                            ([0, 1, 0], -90, [4500, 0, 620]), ([0, 1, 0], 90, [-4500, 0, 620]))):
        out[f"wall{i}"] = {"type": "rectangle", "to_world": T().translate(pos) @ T().rotate(axis, angle)
                           @ T().scale([4500, 1380, 1]), "bsdf": wall}
    return out


class Props:
    """What a session's scenes share: meshes on disk, textures, chip designs (one shape group per value)."""

    def __init__(self, layout: Layout, session: Session, folder: Path) -> None:
        mi = mitsuba()
        rng = np.random.default_rng(session.seed)
        self.layout, self.session, self.folder = layout, session, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.felt = _bitmap(mi, felt_texture(layout, session.felt, rng))
        self.felt_mesh, self.rail_mesh = felt_mesh(folder, layout), rail_mesh(folder, layout)
        self.edge_mesh, self.top_mesh = chip_meshes(folder, layout.chip_diameter / 2, layout.chip_thickness)
        self.markers = {m.id: _bitmap(mi, marker_texture(layout, m.id), nearest=True) for m in layout.markers}
        self.chips = {}
        shades = np.random.default_rng(session.shades)
        for value, colour in render.HOUSE_004.items():
            inlay = float(rng.uniform(0.04, 0.10)) if session.inlay else 0.0
            named = render.CHIP_COLOURS[colour][::-1]
            top, edge = chip_textures(colour, inlay, rng, shade(named, shades) if session.shades else None)
            self.chips[value] = {"type": "shapegroup",
                                 "edge": {"type": "obj", "filename": str(self.edge_mesh), "bsdf": _chip_bsdf(mi, edge)},
                                 "top": {"type": "obj", "filename": str(self.top_mesh), "bsdf": _chip_bsdf(mi, top)}}

    def table(self) -> dict[str, dict]:
        """The felt, the rail, the markers, every camera's white patch and colour card."""
        out: dict[str, dict] = {
            "felt": {"type": "obj", "filename": str(self.felt_mesh),
                     "bsdf": {"type": "diffuse", "reflectance": self.felt}},
            "rail": {"type": "obj", "filename": str(self.rail_mesh),
                     "bsdf": {"type": "roughplastic", "alpha": 0.3, "distribution": "ggx",
                              "diffuse_reflectance": _rgb(srgb_to_linear((45, 30, 24)))}}}
        for marker in self.layout.markers:
            q = 0.75 * marker.size
            corners = np.array([[marker.x - q, marker.y + q], [marker.x + q, marker.y + q],
                                [marker.x + q, marker.y - q], [marker.x - q, marker.y - q]])
            out[f"marker{marker.id}"] = {"type": "obj", "filename": str(quad(self.folder, f"marker{marker.id}",
                                                                             corners, 0.05)),
                                         "bsdf": {"type": "diffuse", "reflectance": self.markers[marker.id]}}
        for mount in self.layout.cameras:
            out[f"white-{mount.name}"] = _patch(self.folder, f"white-{mount.name}", mount.reference, (235, 235, 235))
            for patch in mount.patches:
                out[f"{patch.name}-{mount.name}"] = _patch(self.folder, f"{patch.name}-{mount.name}", patch.polygon,
                                                           patch.srgb)
        return out


def _chip_bsdf(mi: Any, picture: np.ndarray) -> dict:
    """A chip's clay: diffuse colour under a slightly glossy coat."""
    return {"type": "roughplastic", "distribution": "ggx", "alpha": 0.18, "int_ior": 1.5,
            "diffuse_reflectance": _bitmap(mi, picture)}


def _patch(folder: Path, name: str, polygon: Iterable[tuple[float, float]], srgb: Iterable[float]) -> dict:
    """A matte printed patch on the felt, its printed colour as reflectance."""
    pts = np.array(list(polygon), np.float64)
    order = [int(np.argmin(pts[:, 0] - pts[:, 1])), int(np.argmax(pts[:, 0] + pts[:, 1])),
             int(np.argmax(pts[:, 0] - pts[:, 1])), int(np.argmin(pts[:, 0] + pts[:, 1]))]
    return {"type": "obj", "filename": str(quad(folder, name, pts[order], 0.04)),
            "bsdf": {"type": "diffuse", "reflectance": _rgb(srgb_to_linear(srgb))}}


def chips_dict(stacks: Sequence[TallStack], layout: Layout) -> dict[str, dict]:
    """Every chip as an instance of its value's shape group, stacked on its predecessor."""
    mi = mitsuba()
    T = mi.ScalarTransform4f
    out: dict[str, dict] = {}
    for s, stack in enumerate(stacks):
        for k, chip in enumerate(stack.chips):
            axis = [-math.sin(chip.lean), math.cos(chip.lean), 0.0]
            to_world = (T().translate([stack.x + chip.dx, stack.y + chip.dy, k * layout.chip_thickness + 0.01])
                        @ T().rotate(axis, math.degrees(chip.tilt)) @ T().rotate([0, 0, 1], math.degrees(chip.spin)))
            out[f"chip{s}_{k}"] = {"type": "instance", "shapegroup": {"type": "ref", "id": f"design{chip.value}"},
                                   "to_world": to_world}
    return out


def cards_dict(folder: Path, cards: Iterable[tuple[str, bool]], layout: Layout, rng: np.random.Generator,
               tag: str) -> dict[str, dict]:
    """The cards lying in their areas, each a little turned."""
    mi = mitsuba()
    out = {}
    for i, (name, face_up) in enumerate(cards):
        zone = layout.zone(name)
        cx, cy = np.mean(zone.polygon, axis=0)
        a = float(rng.uniform(-0.15, 0.15))
        corners = np.array([(cx + x * math.cos(a) - y * math.sin(a), cy + x * math.sin(a) + y * math.cos(a))
                            for x, y in ((-31.5, 44), (31.5, 44), (31.5, -44), (-31.5, -44))])
        out[f"card{i}"] = {"type": "obj", "filename": str(quad(folder, f"card-{tag}-{i}", corners, 0.3)),
                           "bsdf": {"type": "diffuse", "reflectance": _bitmap(mi, card_texture(face_up, rng))}}
    return out


def arms_dict(folder: Path, arms: Iterable[render.Arm], tag: str) -> dict[str, dict]:
    """The arms: a sleeve of cloth and a hand of skin."""
    out = {}
    for i, arm in enumerate(arms):
        (sv, sf), (hv, hf) = arm_meshes(arm)
        out[f"sleeve{i}"] = {"type": "obj", "filename": str(write_obj(folder / f"sleeve-{tag}-{i}.obj", sv, sf)),
                             "face_normals": True,
                             "bsdf": {"type": "diffuse", "reflectance": _rgb(srgb_to_linear(SLEEVE[arm.sleeve % 4]))}}
        out[f"hand{i}"] = {"type": "obj", "filename": str(write_obj(folder / f"hand-{tag}-{i}.obj", hv, hf)),
                           "face_normals": True,
                           "bsdf": {"type": "roughplastic", "alpha": 0.45, "distribution": "ggx",
                                    "diffuse_reflectance": _rgb(srgb_to_linear(SKIN[arm.skin % 4]))}}
    return out


def render_linear(props: Props, camera: CameraModel, spp: int, stacks: Sequence[TallStack] = (),
                  cards: Iterable[tuple[str, bool]] = (), arms: Iterable[render.Arm] = (), level: float = 1.0,
                  seed: int = 0, margin: tuple[int, int] = (0, 0)) -> np.ndarray:
    """The scene's radiance as the pinhole camera sees it (linear RGB, float32, h x w x 3, with *margin*):
    path tracing (one bounce of indirect light), the first pass of lights at *spp*, the others (single
    spots) at a quarter of it."""
    mi = mitsuba()
    rng = np.random.default_rng(seed)
    tag = f"{seed}"
    scene: dict[str, Any] = {"type": "scene", "integrator": {"type": "path", "max_depth": 3}}
    scene.update({f"design{v}": group for v, group in props.chips.items()})
    scene.update(props.table())
    scene.update(room())
    scene.update(chips_dict(stacks, props.layout))
    scene.update(cards_dict(props.folder, cards, props.layout, rng, tag))
    scene.update(arms_dict(props.folder, arms, tag))
    total: np.ndarray | None = None
    for k, emitters in enumerate(lights(props.session.light, level, np.random.default_rng(props.session.seed))):
        n = spp if k == 0 else max(4, spp // 4)
        sensor = sensor_dict(camera, picture_size(camera), n, margin)
        image = mi.render(mi.load_dict({**scene, **emitters, "sensor": sensor}), spp=n, seed=seed * 16 + k)
        linear = np.array(image, np.float32)[..., :3]
        total = linear if total is None else total + linear
    assert total is not None
    return total


# -- the camera after the lens --------------------------------------------------------------------------------


def lens_margin(camera: CameraModel) -> tuple[int, int]:
    """How much wider than the picture the pinhole render must be for *camera*'s lens to fill it."""
    if not camera.distorted:
        return (0, 0)
    w, h = picture_size(camera)
    edge = np.array([[0, 0], [w / 2, 0], [w - 1, 0], [0, h / 2], [w - 1, h / 2], [0, h - 1], [w / 2, h - 1],
                     [w - 1, h - 1]], np.float64)
    pinhole = camera.undistort(edge)
    mx = max(0.0, float(-pinhole[:, 0].min()), float(pinhole[:, 0].max() - (w - 1)))
    my = max(0.0, float(-pinhole[:, 1].min()), float(pinhole[:, 1].max() - (h - 1)))
    return int(math.ceil(mx)) + 4, int(math.ceil(my)) + 4


def through_lens(linear: np.ndarray, camera: CameraModel, margin: tuple[int, int]) -> np.ndarray:
    """The pinhole render (with *margin*) as *camera*'s lens shows it: each pixel takes the radiance where
    the pinhole sees it (``CameraModel.undistort``), so a table point lands where ``project`` puts it."""
    w, h = picture_size(camera)
    if not camera.distorted:
        return linear[margin[1]:margin[1] + h, margin[0]:margin[0] + w]
    grid = np.mgrid[0:h, 0:w][::-1].reshape(2, -1).T.astype(np.float64)
    source = camera.undistort(grid).astype(np.float32).reshape(h, w, 2) + np.array(margin, np.float32)
    out: np.ndarray = cv2.remap(linear, source[..., 0], source[..., 1], cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    return out


@dataclass
class Sensor:
    """The camera after the lens: shading, blur, auto exposure and white balance (settling over frames),
    an RGGB Bayer sensor (shot noise, read noise, 10 bits, analog gain when the light is short),
    demosaicking, the sRGB curve. Linear radiance in, an 8-bit BGR picture out."""

    full_well: float = 12000.0  # electrons at full scale, analog gain 1 (a 2 x 2 binned pixel of 1.4 µm)
    photons: float = 24000.0  # electrons a radiance of 1 gives at the longest exposure (1/30 s)
    read_noise: float = 2.5  # electrons
    blur: float = 0.35  # the lens's blur (px, Gaussian sigma) on top of the pixel's area
    awb_strength: float = 0.8  # the white balance corrects this share of the light's colour (libcamera keeps some)
    exposure: float | None = None  # the auto exposure's multiplier (digital value per radiance)
    gains: np.ndarray | None = None  # the white balance's gains (R, G, B)

    def settle(self) -> None:
        """Forget the exposure and white balance: the next picture sets them at once (a new scene)."""
        self.exposure, self.gains = None, None

    def meter(self, linear: np.ndarray, rate: float = 0.35) -> None:
        """Auto exposure (the frame's mean at 18 %, its brightest 0.3 % under 90 %) and white balance (the
        brightest near-white pixels' colour), moving *rate* of the way from the last frame's."""
        luma = linear @ np.array([0.2126, 0.7152, 0.0722], np.float32)
        want = min(0.18 / max(float(luma.mean()), 1e-6), 0.9 / max(float(np.percentile(linear.max(2), 99.7)), 1e-6))
        bright = linear[luma >= np.percentile(luma, 99.5)]
        light = bright.mean(0) if len(bright) else np.ones(3)
        gains = (light[1] / np.maximum(light, 1e-6)) ** self.awb_strength
        if self.exposure is None or self.gains is None:
            self.exposure, self.gains = want, gains
        else:
            self.exposure *= (want / self.exposure) ** rate
            self.gains = self.gains * (gains / self.gains) ** rate

    def develop(self, linear: np.ndarray, rng: np.random.Generator, bands: tuple[float, float] = (0.0, 0.0),
                rate: float = 0.35) -> np.ndarray:
        """The picture the camera gives of *linear* (h x w x 3 RGB radiance): *bands* (amplitude, phase) are
        a rolling shutter's rows under a 100 Hz flicker."""
        h, w = linear.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        shading = 1 - 0.2 * (((xx - w / 2) / (w / 2)) ** 2 + ((yy - h / 2) / (h / 2)) ** 2) / 2
        image = cv2.GaussianBlur(linear * shading[..., None], (0, 0), self.blur)
        if bands[0]:
            image = image * (1 + bands[0] * np.sin(2 * math.pi * 2.2 * yy / h + bands[1]))[..., None]
        self.meter(image, rate)
        assert self.exposure is not None and self.gains is not None
        electrons_per_unit = min(self.exposure * self.full_well, self.photons)
        analog = max(1.0, self.exposure * self.full_well / self.photons)
        raw = np.empty((h, w), np.float32)
        raw[0::2, 0::2] = image[0::2, 0::2, 0]
        raw[0::2, 1::2] = image[0::2, 1::2, 1]
        raw[1::2, 0::2] = image[1::2, 0::2, 1]
        raw[1::2, 1::2] = image[1::2, 1::2, 2]
        electrons = rng.poisson(np.clip(raw, 0, None) * electrons_per_unit).astype(np.float32)
        electrons += rng.normal(0, self.read_noise, electrons.shape).astype(np.float32)
        digital = np.round(np.clip(electrons * analog / self.full_well, 0, 1) * 1023) / 1023
        balance = np.empty((h, w), np.float32)
        balance[0::2, 0::2], balance[1::2, 1::2] = self.gains[0], self.gains[2]
        balance[0::2, 1::2] = balance[1::2, 0::2] = self.gains[1]
        mosaic = np.round(np.clip(digital * balance, 0, 1) * 65535).astype(np.uint16)
        bgr = cv2.cvtColor(mosaic, cv2.COLOR_BayerBG2BGR_EA).astype(np.float32) / 65535
        picture: np.ndarray = np.round(linear_to_srgb(bgr) * 255).astype(np.uint8)
        return picture


# -- the sets ---------------------------------------------------------------------------------------------------


def _read(path: Path) -> np.ndarray:
    picture = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if picture is None:
        raise OSError(f"cannot read {path}")
    out: np.ndarray = picture
    return out


def _write(path: Path, picture: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), picture, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]):
        raise OSError(f"cannot write {path}")


def _flicker(session: Session, rng: np.random.Generator) -> tuple[float, tuple[float, float]]:
    """This frame's light level and rolling-shutter bands (amplitude, phase) under *session*'s light."""
    spec = LIGHTS[session.light]
    if "flicker" not in spec:
        return 1.0, (0.0, 0.0)
    return (1 + float(rng.uniform(-1, 1)) * spec["flicker"],
            (spec["bands"] * float(rng.uniform(0.5, 1.0)), float(rng.uniform(0, 2 * math.pi))))


def shoot(props: Props, camera: CameraModel, sensor: Sensor, spp: int, seed: int, rate: float = 0.35,
          **scene: Any) -> np.ndarray:
    """One picture: the scene rendered, through the lens and the sensor."""
    rng = np.random.default_rng(seed)
    level, bands = _flicker(props.session, rng)
    margin = lens_margin(camera)
    linear = render_linear(props, camera, spp, level=level, seed=seed, margin=margin, **scene)
    return sensor.develop(through_lens(linear, camera, margin), rng, bands, rate)


def calibration_pictures(root: Path, props: Props, name: str, camera: CameraModel, spp: int,
                         seed: int) -> dict[str, Any]:
    """The installer's pictures of camera *name*: the bare table, then single chips of each value lying in
    the camera's zones (``render.calibration_shows``), each with the camera settled on it. Also where the
    markers are found in the table's picture (:func:`check_camera`)."""
    layout = props.layout
    table = f"calibration/table_{name}.jpg"
    started = time.perf_counter()
    picture = shoot(props, camera, Sensor(), spp, seed, rate=1.0)
    _write(root / table, picture)
    check = check_camera(_read(root / table), layout, camera)
    _log(table, started, check=check)
    chips = {}
    rng = np.random.default_rng(seed + 1)
    for value, show in render.calibration_shows(layout, render.HOUSE_004).items():
        started = time.perf_counter()
        stacks = [_plain(s, rng) for s in show.stacks]
        chips[str(value)] = f"calibration/chips_{name}_{value}.jpg"
        _write(root / chips[str(value)], shoot(props, camera, Sensor(), spp, seed + value, rate=1.0, stacks=stacks))
        _log(chips[str(value)], started)
    return {"table": [table], "chips": chips, "check": check}


def _log(file: str, started: float, **more: Any) -> None:
    print(json.dumps({"picture": file, "seconds": round(time.perf_counter() - started, 1), **more}), flush=True)


def frame_tags(session: Session, zones: dict[str, dict[str, Any]]) -> list[str]:
    """The session's conditions, the stack variants in the frame's zones (else ``plain``), ``arm`` when one
    covers a zone."""
    kinds = sorted({k for z in zones.values() for k in z["kinds"]} & set(TAGS))
    return session.tags + (kinds or ["plain"]) + (["arm"] if any(z["covered"] for z in zones.values()) else [])


def film_sequence(root: Path, props: Props, name: str, camera: CameraModel, spp: int, frames: int, index: int,
                  seed: int) -> list[dict[str, Any]]:
    """One sequence of camera *name* (``render.sequence``: rest, an arm adds a stack, another passes), its
    stacks built in 3D with the session's variants: the frames' labels."""
    layout = props.layout
    rng = np.random.default_rng(seed)
    scenes = render.sequence(rng, layout, render.HOUSE_004, frames, props.session.tall)
    built = build_stacks(scenes, layout, props.session.variants, rng, eye=tuple(camera.position()[:2]),
                         behind_off=props.session.behind_off)
    sensor, labels = Sensor(), []
    for k, (scene, stacks) in enumerate(zip(scenes, built)):
        file = f"frames/{name}-s{index:02d}-f{k:02d}.jpg"
        started = time.perf_counter()
        picture = shoot(props, camera, sensor, spp, seed * 100 + k, rate=1.0 if k == 0 else 0.35, stacks=stacks,
                        cards=scene.cards, arms=scene.arms)
        _write(root / file, picture)
        _log(file, started)
        zones = truth(stacks, scene.arms, layout, camera)
        labels.append({"file": file, "camera": name, "sequence": f"{name}-s{index:02d}",
                       "tags": frame_tags(props.session, zones), "t": round(k / 10, 2),
                       "zones": zones,
                       "cards": [[z, up] for z, up in scene.cards]})
    return labels


def write_session(out: str | Path, name: str, layout_path: str | Path, frames: int = 10, spp: int = 16,
                  sequences: int = 1, cameras: Sequence[str] | None = None, seed: int | None = None,
                  shades: int = 0, felt: str | None = None, tall: bool = False) -> Path:
    """The set of session *name* in *out*/*name*: per camera its calibration pictures and *sequences*
    sequences of *frames* frames, ``labels.json`` (``docs/vision.md``) and the layout it was made for.
    *seed*: other scenes, chips and noise under the same conditions (default: the session's own); *shades*:
    another maker's chip colours, drawn with this seed (:func:`shade`; 0: the named colours); *felt*: another
    of ``FELTS`` than the session's; *tall*: stacks of 8 chips to the layout's ``max_stack``."""
    session = dataclasses.replace(SESSIONS[name], seed=SESSIONS[name].seed if seed is None else seed, shades=shades,
                                  felt=felt or SESSIONS[name].felt, tall=tall)
    root = Path(out) / name
    root.mkdir(parents=True, exist_ok=True)
    full = load_layout(layout_path)
    shutil.copyfile(layout_path, root / "layout.toml")
    labels: dict[str, Any] = {"format": "pokertable-vision-eval/1", "layout": "layout.toml", "profile": "004",
                              "session": name, "seed": session.seed, "shades": session.shades,
                              "tags": session.tags, "spp": spp,
                              "camera_check": {}, "calibration": {},
                              "frames": []}
    with tempfile.TemporaryDirectory(prefix="physical-") as tmp:
        for c, mount in enumerate(full.cameras):
            if cameras and mount.name not in cameras:
                continue
            layout = full.view(mount.name)
            camera = dataclasses.replace(mount_camera(layout), dist=session.distortion)
            props = Props(layout, session, Path(tmp) / mount.name)
            seed = session.seed * 1000 + 100 * c
            pictures = calibration_pictures(root, props, mount.name, camera, spp, seed)
            labels["camera_check"][mount.name] = pictures.pop("check")
            labels["calibration"][mount.name] = pictures
            for s in range(sequences):
                labels["frames"] += film_sequence(root, props, mount.name, camera, spp, frames, s, seed + 10 + s)
    (root / "labels.json").write_text(render.labels_text(labels), encoding="utf-8")
    return root


# -- the camera check -------------------------------------------------------------------------------------------


def check_camera(picture: np.ndarray, layout: Layout, camera: CameraModel) -> dict[str, Any]:
    """Where ``cv2.aruco`` finds the markers in *picture* against where *camera* projects their corners:
    the markers found by ``calibration.geometry.detect_markers`` (what ``calibrate table`` uses) and their
    corners' mean and largest distance (px); then, corners refined to a sub-pixel, their mean distance and
    mean offset (a wrong camera shows as an offset, blur only as scatter)."""
    from calibration.geometry import detect_markers
    by_id = {m.id: m for m in layout.markers}

    def errors(found: dict[int, np.ndarray]) -> np.ndarray:
        rows = [c - camera.project(np.hstack([by_id[i].corners(), np.zeros((4, 1))])) for i, c in found.items()]
        return np.vstack(rows) if rows else np.zeros((0, 2))

    plain = errors(detect_markers(picture, layout))
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    grey = picture if picture.ndim == 2 else cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = cv2.aruco.ArucoDetector(layout.aruco_dictionary(), params).detectMarkers(grey)
    refined = errors({int(i): c.reshape(4, 2) for c, i in zip(corners, ids.ravel()) if int(i) in by_id}
                     if ids is not None else {})
    out: dict[str, Any] = {"markers": sorted(detect_markers(picture, layout))}
    if len(plain):
        out.update(mean_px=round(float(np.linalg.norm(plain, axis=1).mean()), 3),
                   max_px=round(float(np.linalg.norm(plain, axis=1).max()), 3))
    if len(refined):
        out.update(subpixel_mean_px=round(float(np.linalg.norm(refined, axis=1).mean()), 3),
                   subpixel_offset_px=[round(float(v), 3) for v in refined.mean(0)])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m firmware_host.sim.physical OUT [SESSION...] [--frames N] [--spp N]``."""
    parser = argparse.ArgumentParser(prog="python -m firmware_host.sim.physical", description=__doc__.split("\n")[0])
    parser.add_argument("out", help="where the sets go: OUT/SESSION/labels.json ...")
    parser.add_argument("sessions", nargs="*", metavar="SESSION", help=f"default: all ({', '.join(SESSIONS)})")
    parser.add_argument("--frames", type=int, default=10, help="frames a sequence (at least 10)")
    parser.add_argument("--sequences", type=int, default=1, help="sequences per camera")
    parser.add_argument("--spp", type=int, default=16, help="samples per pixel")
    parser.add_argument("--camera", action="append", help="only this camera (repeat)")
    parser.add_argument("--layout", default=None, help="camera layout TOML (default: the shipped table8.toml)")
    parser.add_argument("--seed", type=int, default=None, help="other scenes, same conditions (a held-out set)")
    parser.add_argument("--shades", type=int, default=0, help="another maker's chip colours, drawn with this seed")
    parser.add_argument("--felt", choices=sorted(FELTS), help="another felt than the session's")
    parser.add_argument("--tall", action="store_true", help="stacks of 8 chips to the layout's max_stack")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sessions if s not in SESSIONS]
    if unknown or args.frames < 10:
        print(f"error: no session {', '.join(unknown)} (sessions: {', '.join(SESSIONS)})" if unknown
              else "error: --frames must be at least 10", file=sys.stderr)
        return 2
    from firmware_host import data
    with data.path(data.CAMERA_LAYOUT) as shipped:
        layout_path = Path(args.layout or shipped)
        for name in args.sessions or list(SESSIONS):
            started = time.perf_counter()
            root = write_session(args.out, name, layout_path, args.frames, args.spp, args.sequences, args.camera,
                                 args.seed, args.shades, args.felt, args.tall)
            print(json.dumps({"session": name, "set": str(root), "minutes": round((time.perf_counter() - started) / 60,
                                                                                   1)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
