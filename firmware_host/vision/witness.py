"""A second view: another camera's picture of the same moment, asked whether the places where a chip could
lie wholly hidden behind this camera's stacks (``vision.hiding``) show the bare felt there.

One view a zone leaves a zone uncertain wherever a chip could hide behind its stacks (``behind``); the two
dealer-corner cameras' lines of sight cross at 60-70 degrees over the table, so what hides behind a stack
from one lies beside it from the other. The other camera need not count: its picture must only hold each
such place whole, no stack of it in front, and look there as it did on the empty table (its calibration
picture, scaled by the light of its white patch). Anything else there (a chip, an arm, a shadow, a stack
of its own in the way) leaves the zone uncertain. docs/vision.md, "A second view of a zone".
"""
from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from firmware_host.vision.arrays import components
from firmware_host.vision.light import TableLight
from firmware_host.vision.projection import StackProjection
from firmware_host.vision.results import StackSeen

__all__ = ["WITNESS_LEVEL", "WITNESS_PATCH", "WITNESS_SEEN", "Witness"]

WITNESS_LEVEL = 0.08  # a pixel this far (sum of channels, share of the felt's) from the empty table's picture changed
WITNESS_PATCH = 0.12  # chip footprints of one changed patch over the places: something lies there
WITNESS_SEEN = 0.6  # of a chip's outline at each place, the share the picture must show clear of the stacks
WITNESS_MARGIN = 3  # px around a stack's outline its own (blurred edges, a chip off its axis); and around the places


class Witness:
    """Another camera's *frame* (of the same moment as the frame counted), with its calibration: its
    projection *geo*, its *light*, the picture of the empty table *empty* (BGR, the frame's size) and that
    picture's white patch (*empty_white*, BGR)."""

    def __init__(self, geo: StackProjection, light: TableLight, empty: tuple[np.ndarray, np.ndarray],
                 frame: np.ndarray) -> None:
        self.geo, self.light, (self.empty, empty_white), self.frame = geo, light, empty, frame
        if frame.shape != self.empty.shape:
            raise ValueError(f"the witness's frame is {frame.shape[1]}x{frame.shape[0]}, its empty table's picture "
                             f"{self.empty.shape[1]}x{self.empty.shape[0]}")
        # the light now against the empty table's, per channel, from the white patch (never from the places:
        # a chip over all of them would set its own level)
        self.gain = light.white(frame).astype(np.float32) / np.maximum(empty_white.astype(np.float32), 1.0)

    def clear(self, spots: np.ndarray, stacks: Sequence[StackSeen]) -> bool:
        """Whether a chip lying at any of *spots* (table mm, k x 2) would be seen here and none is: the
        picture holds each chip's outline whole, ``WITNESS_SEEN`` of it clear of the *stacks* standing (as the
        counting camera measured them), and no patch of ``WITNESS_PATCH`` chip footprints there is unlike the
        empty table."""
        if not len(spots):
            return True
        geo = self.geo
        centres = geo.cam.project(np.asarray(spots, np.float64))
        nearest = spots[int(np.argmin(np.linalg.norm(spots - geo.cam_xy, axis=1)))]
        kernel, (ax, ay) = geo.chip_kernel(nearest)  # the largest outline of them: the nearest the camera
        kh, kw = kernel.shape
        m = WITNESS_MARGIN
        x0, y0 = np.floor(centres.min(0)).astype(int) - (ax + m, ay + m)
        x1, y1 = np.ceil(centres.max(0)).astype(int) + (kw - ax + m, kh - ay + m)
        h, w = self.frame.shape[:2]
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:  # not held whole
            return False
        at = np.zeros((y1 - y0, x1 - x0), np.uint8)
        uv = np.round(centres - (x0, y0)).astype(int)
        at[uv[:, 1], uv[:, 0]] = 1
        # the chips' outlines there, together (each centre spread by the outline, mirrored about its anchor)
        places = cv2.dilate(at, kernel[::-1, ::-1], anchor=(kw - 1 - ax, kh - 1 - ay))
        places = cv2.dilate(places, np.ones((2 * m + 1, 2 * m + 1), np.uint8))
        standing = np.zeros_like(at)
        for s in stacks:
            if s.count > 0:
                rings = np.vstack([geo.ring(s.x, s.y, 0.0), geo.ring(s.x, s.y, s.count * geo.t)]) - (x0, y0)
                cv2.fillConvexPoly(standing, cv2.convexHull(np.round(rings).astype(np.int32)), 1)
        standing = cv2.dilate(standing, np.ones((2 * m + 1, 2 * m + 1), np.uint8))
        hidden = cv2.filter2D(standing.astype(np.float32), -1, kernel.astype(np.float32), anchor=(ax, ay),
                              borderType=cv2.BORDER_CONSTANT)  # of each place's outline, the pixels a stack covers
        if (hidden[at.astype(bool)] > (1 - WITNESS_SEEN) * float(kernel.sum())).any():  # behind a stack from here too
            return False
        now = self.frame[y0:y1, x0:x1].astype(np.float32)
        empty = self.empty[y0:y1, x0:x1].astype(np.float32) * self.gain
        level = float(np.median(empty.sum(-1)[places.astype(bool)]))
        off = cv2.transform(cv2.absdiff(now, empty), np.ones((1, 3), np.float32))
        changed = ((off > WITNESS_LEVEL * level) & places.astype(bool) & ~standing.astype(bool)).astype(np.uint8)
        changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, _, stats, _ = components(changed)
        return not bool((stats[1:n, cv2.CC_STAT_AREA] >= WITNESS_PATCH * int(kernel.sum())).any())
