"""Where a stack of chips lies in one camera's picture: the projection of chip circles, stacks' outlines
and bases, the rows of their rims (pure geometry of a calibrated camera; millimetres on the table,
pixels in the picture)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.geometry import TableCalibration, Zone

__all__ = ["StackProjection", "ZoneRoi"]

_DENSE = np.column_stack([np.cos(np.linspace(0, 2 * np.pi, 96, endpoint=False)),
                          np.sin(np.linspace(0, 2 * np.pi, 96, endpoint=False))])
_RING = np.column_stack([np.cos(np.linspace(0, 2 * np.pi, 24, endpoint=False)),
                         np.sin(np.linspace(0, 2 * np.pi, 24, endpoint=False))])


@dataclass
class ZoneRoi:
    """A zone's region of interest in the picture: its box (x0, y0) to (x1, y1) and its pixels there."""

    zone: Zone
    x0: int
    y0: int
    x1: int
    y1: int
    mask: np.ndarray  # the zone's own pixels (card areas) in the ROI
    cards: dict[str, np.ndarray] = field(default_factory=dict)  # chip zones: card area -> its pixels (flat) in the ROI


class StackProjection:
    """Chip circles and stacks of one calibrated camera (*calib*) as its picture shows them."""

    def __init__(self, calib: TableCalibration) -> None:
        self.cam = calib.camera
        position = self.cam.position()
        self.cam_xy, self.cam_z = position[:2], float(position[2])
        self.r, self.t = calib.layout.chip_diameter / 2, calib.layout.chip_thickness
        self.P = self.cam.K @ np.hstack([self.cam.R, self.cam.tvec.reshape(3, 1)])
        # a chip's circle, relative to its centre, in homogeneous image coordinates (3 x N)
        self.ring_shape = self.r * (np.outer(self.P[:, 0], _RING[:, 0]) + np.outer(self.P[:, 1], _RING[:, 1]))
        self.dense_shape = self.r * (np.outer(self.P[:, 0], _DENSE[:, 0]) + np.outer(self.P[:, 1], _DENSE[:, 1]))

    def chip_kernel(self, at: np.ndarray) -> tuple[np.ndarray, tuple[int, int]]:
        """One chip lying at *at* (mm) as the picture shows it: its outline filled (an erosion kernel)
        and the pixel of its centre on the felt in it (the kernel's anchor)."""
        centre = self.cam.project(np.array([[at[0], at[1], 0.0]]))[0]
        chip = np.vstack([self.ring(at[0], at[1], 0.0), self.ring(at[0], at[1], self.t)]) - centre
        lo = np.floor(chip.min(0)).astype(int)
        kernel = np.zeros(tuple(np.ceil(chip.max(0)).astype(int) - lo + 1)[::-1], np.uint8)
        cv2.fillConvexPoly(kernel, cv2.convexHull(np.round(chip - lo).astype(np.int32)), 1)
        return kernel, (int(-lo[0]), int(-lo[1]))

    def ring(self, x: float, y: float, z: float, shape: np.ndarray | None = None) -> np.ndarray:
        """Image outline of a chip's circle centred at (x, y) at height z (N x 2)."""
        shape = self.ring_shape if shape is None else shape
        h = shape + (self.P[:, 0] * x + self.P[:, 1] * y + self.P[:, 2] * z + self.P[:, 3])[:, None]
        outline: np.ndarray = (h[:2] / h[2]).T
        return self.cam.distort(outline)

    def rings(self, x: float, y: float, heights: np.ndarray) -> np.ndarray:
        """:meth:`ring` at each of *heights* (mm) at once (heights x N x 2)."""
        u, v = self.outlines(self.above(x, y, heights), self.ring_shape)
        rings: np.ndarray = np.stack([u.T, v.T], axis=-1)
        return rings

    def above(self, x: float, y: float, heights: np.ndarray) -> np.ndarray:
        """The homogeneous image points (3 x heights) of the table points over (x, y) at *heights* (mm)."""
        P = self.P
        at: np.ndarray = (P[:, 0] * x + P[:, 1] * y)[:, None] + P[:, 2][:, None] * heights[None, :] + P[:, 3][:, None]
        return at

    def outline(self, x: float, y: float, count: int, widen: float = 0.0, base: np.ndarray | None = None) -> np.ndarray:
        """The outline of a stack of *count* chips at (x, y) in the picture (the convex hull of its base and
        top circles, M x 2), each vertex moved *widen* px away from the hull's centre (for the blur); *base*:
        its base circle (``ring`` at 0) when already projected."""
        base = self.ring(x, y, 0.0) if base is None else base
        hull = cv2.convexHull(np.vstack([base, self.ring(x, y, count * self.t)])
                              .astype(np.float32)).reshape(-1, 2)
        out = hull - hull.mean(0)
        widened: np.ndarray = hull + widen * out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return widened

    def outlines(self, at: np.ndarray, shape: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image columns and rows (points x circles) of a chip's circle (*shape*: ``ring_shape`` or
        ``dense_shape``) centred at each of the homogeneous image points *at* (3 x circles), through the lens."""
        h = shape[:, :, None] + at[:, None, :]
        u, v = h[0] / h[2], h[1] / h[2]
        return self.cam.distort_apart(u, v)

    def rough_base(self, u: float, v: float) -> np.ndarray:
        """:meth:`rough_bases` of one pixel."""
        base: np.ndarray = self.rough_bases(np.array([[u, v]]))[0]
        return base

    def rough_bases(self, uv: np.ndarray) -> np.ndarray:
        """Rough centres (N x 2, mm) of stacks whose base's lowest point is at image pixels *uv* (N x 2):
        the felt there, a chip's radius further from the camera."""
        q = self.cam.to_table(uv)
        d = q - self.cam_xy
        bases: np.ndarray = q + d / np.linalg.norm(d, axis=1, keepdims=True) * self.r
        return bases

    def base(self, u: float, v: float, rough: np.ndarray | None = None) -> tuple[float, float]:
        """The stack centre (mm) whose base outline is centred on column *u* with its lowest point at row *v*
        (from its *rough* base when already taken)."""
        c = self.rough_base(u, v) if rough is None else rough
        target = np.array([u, v])
        g = self.base_pixels(c + np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))  # and 1 mm along x and y
        g0, J = g[0], (g[1:] - g[0]).T
        J_inv = np.linalg.inv(J)
        c = c + J_inv @ (target - g0)  # two Newton steps on (centre column, lowest row) of the projected base
        c = c + J_inv @ (target - self.base_pixel(c))
        return float(c[0]), float(c[1])

    def boundary(self, x: float, y: float, z: float, cols: np.ndarray, upper: bool) -> np.ndarray:
        """Rows of the upper (or lower) outline of the circle at height z, at image columns *cols*."""
        rows: np.ndarray = self.boundaries(x, y, np.array([z]), cols, upper)[0]
        return rows

    def boundaries(self, x: float, y: float, heights: np.ndarray, cols: np.ndarray, upper: bool,
                    beyond: float | None = None) -> np.ndarray:
        """Rows of the upper (or lower) outlines of a chip's circles centred at (x, y) at each of
        *heights* (mm), at image columns *cols* (heights x columns; *beyond* an outline's ends, or its
        end's row without it). Every circle projected at once."""
        u, v = self.outlines(self.above(x, y, heights), self.dense_shape)
        u, v = u.T.copy(), v.T.copy()  # heights x points: each outline's points together
        half = v < v.mean(1)[:, None] if upper else v >= v.mean(1)[:, None]
        u = np.where(half, u, np.inf)  # each outline's half sorted along the columns at once (the rest last)
        order = np.argsort(u, axis=1) + np.arange(0, u.size, u.shape[1])[:, None]
        u, v = u.ravel()[order], v.ravel()[order]
        rows = np.empty((len(heights), len(cols)))
        for k, n in enumerate(half.sum(1).tolist()):
            rows[k] = np.interp(cols, u[k, :n], v[k, :n], left=beyond, right=beyond)
        return rows

    def predicted_spans(self, x: float, y: float, cols: np.ndarray, most: int, bottom: np.ndarray) -> np.ndarray:
        """Silhouette height at each of *cols* of a stack of 0..*most* chips at (x, y) (*most* + 1 x columns;
        *bottom*: its base's lower outline at *cols*).

        The silhouette's top at a column is the highest outline of any layer there
        (a leaning stack in the oblique view shows a lower layer's rim beside the top).
        """
        tops = self.boundaries(x, y, np.arange(max(most, 1) + 1) * self.t, cols, upper=True, beyond=np.inf)
        spans: np.ndarray = bottom - np.minimum.accumulate(tops, axis=0)
        return spans

    def rims(self, x: float, y: float, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The middle half of a stack's columns at (x, y) and the rows of its layers' front rims there
        (heights 0 to *count* chips: count + 1 x columns): where its side is read and its face's step."""
        cols = self.middle_columns(x, y)
        rims = self.boundaries(x, y, np.arange(count + 1) * self.t, cols, upper=False)
        return cols, rims

    def middle_columns(self, x: float, y: float) -> np.ndarray:
        """The image columns of the middle half of a stack's base at (x, y)."""
        ring = self.ring(x, y, 0.0)
        u0, u1 = float(ring[:, 0].min()), float(ring[:, 0].max())
        cols: np.ndarray = np.arange(int(np.ceil(0.75 * u0 + 0.25 * u1)), int(np.floor(0.25 * u0 + 0.75 * u1)) + 1)
        return cols

    def base_pixel(self, c: np.ndarray | tuple[float, float]) -> np.ndarray:
        """The pixel of a stack's base centred at *c* (mm): its outline's middle column and lowest row."""
        pixel: np.ndarray = self.base_pixels(np.array([c], np.float64))[0]
        return pixel

    def base_pixels(self, centres: np.ndarray) -> np.ndarray:
        """:meth:`base_pixel` of each of *centres* (N x 2, mm) at once (N x 2)."""
        P = self.P
        u, v = self.outlines(P[:, 0][:, None] * centres[:, 0] + P[:, 1][:, None] * centres[:, 1] + P[:, 3][:, None],
                              self.ring_shape)
        pixels: np.ndarray = np.column_stack([(u.min(0) + u.max(0)) / 2, v.max(0)])
        return pixels

    def shadow(self, x: float, y: float, count: int) -> float:
        """How far (mm) behind a stack of *count* chips at (x, y) the line from the camera over its top meets
        the felt: no chip further away than that and a diameter can lie hidden by it."""
        height = count * self.t
        far = math.hypot(x - self.cam_xy[0], y - self.cam_xy[1])
        return height * (far + self.r) / max(self.cam_z - height, 1.0)
