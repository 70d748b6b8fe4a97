"""Chip counting per betting zone and the card areas, one frame at a time; the chip calibration.

Functional core: :meth:`ChipCounter.count` takes a frame (and the previous one, for
motion) and returns what each zone holds in that frame; ``vision.stability``
turns per-frame counts into :class:`ChipsInZone` observations only once a
zone has held the same stacks for N frames with no motion; ``vision.health``
turns frame arrival into :class:`DeviceFault` observations. Time is always
passed in. :func:`learn_chips` learns the chips' colours through the counter's
public hooks (``count(..., collect=...)``, :meth:`ChipCounter.inlay_contrast`).

Per zone, only its region of interest is read: light normalised against the
white reference patch, pixels unlike the felt grouped into blobs; a blob of
chip width is one stack: its base found on the felt through the calibrated
camera, its denomination from the colour of its top face, its count from its
sub-pixel height in the oblique view against the camera model's height for
0..N chips at that place. A blob too large over the zone is an arm or a hand:
the zone is ``occluded`` (unless a thin printed line joined a stack to it: it is cut
there); a blob of the wrong shape, specks that gather into part of a chip, or a
count or colour that falls between two answers makes the zone ``uncertain`` with
a low confidence, never a guess. See ``docs/vision.md``.

Its parts: ``vision.projection`` (where a stack lies in the picture), ``vision.sides`` (a stack's chips
read on its side), ``vision.hiding`` (a chip wholly hidden behind stacks), ``vision.results`` (what a
frame shows).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

import cv2
import numpy as np

from calibration.chips import ChipModels, ColourModel, features, side_features
from calibration.geometry import TableCalibration
from firmware_host.vision import hiding
from firmware_host.vision.arrays import every, median
from firmware_host.vision.colour import CardReference, Correction, card_seen
from firmware_host.vision.colour import fit as fit_colour
from firmware_host.vision.projection import StackProjection, ZoneRoi
from firmware_host.vision.results import (
    MIN_CONFIDENCE,
    CardSeen,
    FrameResult,
    StackSeen,
    ZoneCount,
    ZoneStatus,
)
from firmware_host.vision.sides import SideReader, sample

__all__ = ["ChipCounter", "count_confidence", "learn_chips"]

FELT_RESIDUAL = 0.10  # share of the felt's norm a pixel may stray from felt-times-light plus glare
FELT_GLARE = 0.3  # the most white (share of the reference patch) a lamp's reflection adds to the felt
FELT_SHADE = 0.4  # the darkest the felt may be (share of its calibrated level): a shadow deeper than this is not felt
INNER_TOP, INNER_BOT = (3, 7), (3, 6)  # rows inside an edge whose median is the chip's level there
STACK_OFFSET_MM = 0.5  # how far (per axis) a chip may sit off the one below it in a stack (a random walk up it)
MAX_COLUMN_CORRELATION = 0.8  # the most neighbouring columns' edge errors are taken to go together
CALIBRATION_SIGMA = 0.07  # chips: the edge bias a single-chip calibration leaves per denomination
COLUMN_MARGIN = 0.25  # share of the base's width left out on either side (the rim's steep ends)
OUTLIER_PX = 1.5  # px a column's span may stray from the other columns' before it is left out
KEEP_SHARE = 0.6  # the least share of a stack's columns a count rests on (outliers out, tops against a card)
STRAY_CHIPS = 2.0  # a column further than this off the others' span: the outline is not one stack's
CONFIDENT_SIGMAS = 1.5  # uncertainties between a confident height and the half-way point to the next count
MOTION_LEVEL, MOTION_SHARE = 30, 0.01  # motion: over 1 % of a zone's pixels changed by over 30 grey levels
REFERENCE_MIN_LEVEL, REFERENCE_MAX_SPREAD = 40.0, 0.12  # the white patch: bright enough, even (std / mean)
CARD_NOISE = 4.0  # grey levels of noise a colour card patch may show beyond REFERENCE_MAX_SPREAD of its level
EDGE_MM = 6.0  # a stack's centre this close to its zone's edge (either side) cannot be given to a zone
BASE_REFINED = 5.0  # mm: the most the base's refinement moves it from the rough base (measured: 1.4 over 9,180)
SATURATED = 250.0  # a patch channel this bright has clipped: the exposure is too long
CARD_SEPARATION = 8.0  # spreads of a chip's top face model a card's colour must be from it to tell them apart
CLEAR_ROWS = 2  # rows of felt just over a column's top that show it clear of a card like the chip behind
CLEAR_COLUMNS, CLEAR_SHARE = 3, 0.15  # the fewest such clear columns (number, share of the stack's) to count it
INLAY_SHARE = 0.4  # share of its learnt contrast a top face's centre must show to confirm a count
INLAY_MIN = 0.15  # a learnt inlay contrast under this confirms no count (the centre does not stand out)
INLAY_REACH, INLAY_CONFIDENCE = 0.35, 0.75  # a height this near a count its top face's centre confirms: that count
BEYOND_FOOTPRINTS = 0.25  # chip footprints of a blob beyond its stack's outline: not one stack (plain: at most 0.09)
BEYOND_OTHER = 0.08  # chip footprints of one patch of another denomination's colour there: a stack behind it showing
# beside it (a sliver: 0.11-0.15; plain stacks at most 0.02-0.05, 0.08 blurred 2 px)
CHROMA_FLOOR = 0.08  # a pixel darker than this (share of the white patch) has no chroma to tell a colour by
FOREIGN_CHIPS = 1.0  # chips of another denomination's side under a stack's top: a stack behind it, not one stack
FOREIGN_SPREADS = 6.0  # a side row this many spreads from the top's colour model is not the top's denomination
OTHER_SPREADS = 4.0  # a side row within this many spreads of another denomination's model is that one's
SIDE_SHADE = 0.6  # the darkest a chip's shaded side is, as a share of its face's level
CARD_SIGMA = 0.1  # chips: the extra uncertainty of a top measured against a card rather than the felt
VISIBLE_SHARE = 0.8  # a denomination whose chips calibration finds less often than this share of the best-found
# one's looks like the felt (kept as hidden); one found as often stands out of it whatever its model's distance
TWO_BASES = (1.75, 2.3)  # chip widths a blob's base spans when two stacks touch side by side
UNDER_BASE = 0.7  # chips under a stack's base (in px per chip at its front) where a missed chip's side is
FELT_APART = 0.3  # a pixel this far (share of the felt's norm) from the felt beside it is not felt
BASE_COVERED = 0.25  # share of the columns not felt there: a chip under the base the edges did not see (a green
# 200 on green felt under a pink 2000 showed 0.29 of its white edge spots: 0.3 read it as one 2000)
VOUCHED_BASE = 0.2  # and for a stack vouched for chip by chip (topped by a side look-alike): felt under its base
LIGHT_APART = 1.5  # a chip zone's felt this many times brighter or darker, against the rest of the table's, than
# in the calibration pictures (a spot moved, a lamp out): its chips are not counted (learnt in other light)
LIGHT_ASIDE = 1.25  # ... this many times: a stack there whose top face reads under WEAK_COLOUR is not counted
WEAK_COLOUR = 0.75  # (the colour's distance from its model is the light's, not the chip's)
BASE_MOVED = 1.0  # chip widths a stack's base may move from its blob's lowest point as its edges are measured
LIGHT_PIXELS = 60  # felt pixels (every fourth row and column) a zone's light is measured on
THIN = 0.25  # chip widths: a blob over a zone that touches its edge is cut where thinner (a printed line)
PRINT_MATCH = 0.08  # share of the white patch (per channel) the felt's print may stray from the empty table's
PRINT_PART = 0.05  # chip footprints: the least part of the print kept (a marker's or a patch's corners are less)
PRINT_CLEAN = 3  # chips of a denomination off the print that chip calibration learns its side and edge from
THIN_CUT = 0.05  # chip footprints (width squared) of the zone the cut may take away: more is an arm's
SPECKS = 0.05  # chip footprints of specks (each too small to measure) within SPECKS_REACH chip widths of one
SPECKS_REACH = 0.75  # another: something on the felt that cannot be read (a chip the felt test half misses)
FACE_STEP = 0.3  # a step this bright (light-normalised sum of channels) from side to face under a lower rim than a
FACE_STEP_SHARE = 0.4  # stack's top, the top rim's under this share of it: the face of a stack behind, seen over it
UNSEEN_LEVEL = 0.08  # a pixel this far (sum of channels, share of the felt's) from the empty table's picture changed
UNSEEN_MARGIN = 3  # px at half scale around each stack's outline its own (blurred edges, a chip off its axis)
UNSEEN = 0.12  # chip footprints of one changed patch beyond the stacks' outlines: something there the felt test
# missed, when a denomination looks like the felt (``ChipModels.hidden``): the zone is uncertain


# a card beside a split stack: its pixels (ROI mask), its light-normalised colour, the direction
# from that colour to the chip's top face (card 0, chip 1); see ChipCounter._card_contrast
_CardContrast = tuple[np.ndarray, np.ndarray, np.ndarray]
# a stack's measured columns (crop), their silhouette heights (px) and bottom rows, whether each top
# is near a card and clear of it (None without a card); see ChipCounter._column_spans
_ColumnSpans = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]


class ChipCounter:
    """Counts the chips of every zone of one calibrated table (precomputes each zone's ROI)."""

    def __init__(self, calib: TableCalibration, models: ChipModels) -> None:
        self.calib, self.models = calib, models
        self.sides = SideReader(models)  # a stack's chips read one by one on its side
        self.geo = StackProjection(calib)  # where stacks lie in the picture
        self.cam = calib.camera
        lay = calib.layout
        self.r, self.t = self.geo.r, self.geo.t  # a chip's radius and thickness (mm)
        w, h = calib.image_size
        self.rois: list[ZoneRoi] = []
        for zone in lay.zones:
            poly = np.array(zone.polygon)
            height = lay.max_stack * self.t if zone.kind != "cards" else 0.0  # cards lie flat
            top = np.hstack([poly, np.full((len(poly), 1), height)])
            pts = np.vstack([self.cam.project(poly), self.cam.project(top)])
            margin = 4 + calib.chip_diameter_px(*poly.mean(0)) * (0.6 if zone.kind != "cards" else 0.1)
            x0, y0 = np.floor(pts.min(0) - margin).astype(int)
            x1, y1 = np.ceil(pts.max(0) + margin).astype(int)
            x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
            mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillPoly(mask, [np.round(self.cam.project(poly) - (x0, y0)).astype(np.int32)], 1)
            cards: dict[str, np.ndarray] = {}
            if zone.kind != "cards":  # where a card lying flat in one of this camera's card areas would be
                for area in lay.zones:
                    if area.kind == "cards":
                        pixels = np.zeros((y1 - y0, x1 - x0), np.uint8)
                        pts = self.cam.project(np.array(area.polygon)) - (x0, y0)
                        cv2.fillPoly(pixels, [np.round(pts).astype(np.int32)], 1)
                        if pixels.any():
                            cards[area.name] = pixels.astype(bool)
            self.rois.append(ZoneRoi(zone, x0, y0, x1, y1, mask.astype(bool), cards))
        self.rois.sort(key=lambda r: r.zone.kind != "cards")  # card areas first: chip zones use them
        patch = np.array(lay.reference)  # its middle (shrunk to 60 % about its centre): no felt at its edges
        inner = self.cam.project(patch.mean(0) + 0.6 * (patch - patch.mean(0)))
        rx0, ry0 = np.floor(inner.min(0)).astype(int)
        rx1, ry1 = np.ceil(inner.max(0)).astype(int) + 1
        self.ref_box = (ry0, ry1, rx0, rx1)
        ref_mask = np.zeros((ry1 - ry0, rx1 - rx0), np.uint8)
        cv2.fillConvexPoly(ref_mask, np.round(inner - (rx0, ry0)).astype(np.int32), 1)
        self.ref_mask = ref_mask.astype(bool)
        self.card = models.card  # the colour card under the calibration's light (None: white patch only)
        self.patch_boxes = {p.name: self._patch_box(np.array(p.polygon)) for p in lay.mount().patches}
        self._correction: tuple[np.ndarray, Correction | None] | None = None  # the last frame's, and its frame
        self._light: tuple[np.ndarray, dict[str, float]] | None = None  # the last frame's zones' light, relative
        self.felt = models.felt
        cb, cg, v = models.felt.mean
        felt = np.array([cb * 3 * v, cg * 3 * v, (1 - cb - cg) * 3 * v], np.float32)
        B = np.column_stack([felt, np.ones(3, np.float32)])  # felt under more or less light, plus white glare
        self._felt_norm = float(np.linalg.norm(felt))
        self._last_grey: tuple[np.ndarray, np.ndarray] | None = None  # the last frame counted, its half grey
        self._coef = np.linalg.pinv(B).astype(np.float32)  # 2 x 3
        normal = np.cross(felt, np.ones(3, np.float32))  # what felt and glare cannot explain: one direction
        normal /= max(float(np.linalg.norm(normal)), 1e-9)
        self._split = np.vstack([self._coef, normal]).astype(np.float32)  # (felt level, glare, residual)
        bound = FELT_RESIDUAL * self._felt_norm
        self._felt_low = (FELT_SHADE, -1e9, -bound)  # felt: level FELT_SHADE..1.6, glare to FELT_GLARE, small residual
        self._felt_high = (1.6, FELT_GLARE, bound)
        # per chip zone, the level bounds about its felt's level in the calibration pictures (a spot's pool)
        self._felt_bounds = {z: ((FELT_SHADE * min(lit, 1.0), -1e9, -bound * max(lit, 1.0)),
                                 (1.6 * max(lit, 1.0), FELT_GLARE, bound * max(lit, 1.0)))
                             for z, lit in models.felt_light.items()}
        # per denomination, the colour direction its edges are measured in (see chips.edge_direction)
        self._directions = {v: np.array(d, np.float32) for v, d in models.edge_dir.items()}
        # per denomination: the other denominations' models' means and spreads, then its own
        self._models: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for v in models.chips:
            order = [m for u, m in models.chips.items() if u != v] + [models.chips[v]]
            self._models[v] = (np.array([m.mean for m in order], np.float32), np.array([m.spread for m in order],
                                                                                     np.float32))
        self._prints = self._learn_prints(calib.empty) if calib.empty is not None else {}
        self._empty = self._empty_crops(calib.empty) if models.hidden else {}
        self._printed: np.ndarray | None = None  # the print's pixels in the whole picture
        for roi in self.rois:
            if roi.zone.name in self._prints:
                (rows, cols), _ = self._prints[roi.zone.name]
                if self._printed is None:
                    self._printed = np.zeros(calib.image_size[::-1], bool)
                self._printed[rows + roi.y0, cols + roi.x0] = True

    def _learn_prints(self, empty: np.ndarray) -> dict[str, tuple[tuple[np.ndarray, np.ndarray], np.ndarray]]:
        """Per chip zone, the felt's print seen in the empty table's picture: its thin not-felt pixels
        (a printed line, a logo's strokes: thinner than ``THIN`` chip widths; a marker, or a chip left on
        the table, is not thin) and their light-normalised colour, as (rows, columns), colours."""
        if empty.shape[1::-1] != tuple(self.calib.image_size):
            return {}
        white = np.maximum(self.white(empty).astype(np.float32), 1.0)
        out = {}
        for roi in self.rois:
            if roi.zone.kind == "cards":
                continue
            smooth = cv2.blur(empty[roi.y0:roi.y1, roi.x0:roi.x1], (3, 3))
            off = self.not_felt(smooth, white, roi.zone.name).astype(np.uint8)
            width = self.calib.chip_diameter_px(*np.array(roi.zone.polygon).mean(0))
            thin = int(THIN * width) | 1
            opened = cv2.morphologyEx(off, cv2.MORPH_OPEN, np.ones((thin, thin), np.uint8))
            _, labels, stats, _ = _components(((off > 0) & (opened == 0)).astype(np.uint8))
            big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= PRINT_PART * width * width)
            printed = np.isin(labels, big[big > 0]).astype(np.uint8)
            rows, cols = np.nonzero(cv2.dilate(printed, np.ones((3, 3), np.uint8)))  # and its blurred edges
            if len(rows):
                out[roi.zone.name] = ((rows, cols), smooth[rows, cols].astype(np.float32) / white)
        return out

    def _empty_crops(self, empty: np.ndarray | None) -> dict[str, tuple[np.ndarray, float]]:
        """Per chip zone, the empty table's picture there (at half scale, float) and its median level (sum of
        channels): what a zone is compared with when a denomination looks like the felt (:meth:`_unseen`)."""
        if empty is None or empty.shape[1::-1] != tuple(self.calib.image_size):
            hidden = ", ".join(str(v) for v, _, _ in self.models.hidden)
            raise ValueError(f"camera {self.calib.layout.camera}: chips {hidden} look like the felt, and the table "
                             "calibration holds no picture of the empty table to check the zones against: run "
                             "calibrate table again on an empty table")
        out = {}
        for r in self.rois:
            if r.zone.kind != "cards":
                crop = _half(empty[r.y0:r.y1, r.x0:r.x1]).astype(np.float32)
                out[r.zone.name] = (crop, max(float(np.median(crop[_half_mask(r.mask)].sum(1))), 1.0))
        return out

    def _unseen(self, roi: ZoneRoi, crop: np.ndarray, stacks: Sequence[StackSeen],
                cut: np.ndarray | None) -> tuple[float, float] | None:
        """Where (px in *crop*) the zone differs from the empty table's picture beyond the outlines of
        its *stacks* (and the card areas *cut* that hold a card) over ``UNSEEN`` chip footprints in one
        patch, or None; at half scale. The empty picture is scaled per channel by the zone's median ratio
        to it (the light's level). A shadow there counts too: something the felt test missed could lie in it."""
        (empty, level), mask = self._empty[roi.zone.name], _half_mask(roi.mask)
        now = _half(crop)
        some = mask[::2, ::2]  # the light's level from every fourth row and column
        gain = np.median(now[::2, ::2][some] / np.maximum(empty[::2, ::2][some], 1.0), axis=0)
        off = cv2.absdiff(now.astype(np.float32), empty * gain.astype(np.float32))
        over = (cv2.transform(off, np.ones((1, 3), np.float32)) > UNSEEN_LEVEL * level).astype(np.uint8)
        changed = cv2.morphologyEx(over, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        outline = np.zeros_like(changed)
        for s in stacks:
            rings = np.vstack([self.geo.ring(s.x, s.y, 0.0), self.geo.ring(s.x, s.y, max(s.count, 1) * self.t)])
            cv2.fillConvexPoly(outline, cv2.convexHull(np.round((rings - (roi.x0, roi.y0)) / 2).astype(np.int32)), 1)
        outline = cv2.dilate(outline, np.ones((UNSEEN_MARGIN, UNSEEN_MARGIN), np.uint8))
        left = changed.astype(bool) & ~outline.astype(bool) & mask
        if cut is not None:
            left &= ~_half_mask(cut)
        n, _, stats, centres = _components(left.astype(np.uint8))
        if n < 2:
            return None
        k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        x, y = 2 * centres[k]
        width = self.calib.chip_diameter_px(*self.geo.rough_base(roi.x0 + x, roi.y0 + y))
        return (float(x), float(y)) if 4 * stats[k, cv2.CC_STAT_AREA] >= UNSEEN * width ** 2 else None

    def near_print(self, stack: StackSeen) -> bool:
        """Whether the felt's print (seen in the empty table's picture) lies within 3 px of a single
        chip *stack*'s outline: its side's colour may hold the print's (chip calibration leaves it out)."""
        if self._printed is None:
            return False
        rings = np.vstack([self.geo.ring(stack.x, stack.y, 0.0), self.geo.ring(stack.x, stack.y, self.t)])
        (x0, y0), (x1, y1) = np.floor(rings.min(0)).astype(int) - 4, np.ceil(rings.max(0)).astype(int) + 5
        h, w = self._printed.shape
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            return True
        outline = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(outline, cv2.convexHull(np.round(rings - (x0, y0)).astype(np.int32)), 1)
        near = cv2.dilate(outline, np.ones((7, 7), np.uint8)).astype(bool)
        return bool((self._printed[y0:y1, x0:x1] & near).any())

    def _elsewhere(self, blob: np.ndarray, at: tuple[int, int], roi: ZoneRoi, x: float, y: float, width: float) -> bool:
        """Whether a blob (at *at* in *roi*) placed at (x, y), beyond the zone, is another zone's: little of
        it (0.2 chip footprint) over this zone, or it fits the outline of one stack standing there (not a stack
        of this zone joined to a printed line, whose lowest point is the line's)."""
        return _over(blob, at, roi) <= 0.2 * width * width or self._beyond_outline(
            *self._beyond(blob, at, (roi.x0, roi.y0), x, y, self.calib.layout.max_stack)) <= BEYOND_FOOTPRINTS

    def _unprinted(self, name: str, fg: np.ndarray, smooth: np.ndarray, white: np.ndarray) -> np.ndarray:
        """*fg* (a chip zone's not-felt pixels) less the felt's print where it looks as it did in the empty
        table's picture (within ``PRINT_MATCH`` of the light, each channel): a chip over it does not."""
        printed = self._prints.get(name)
        if printed is None:
            return fg
        (rows, cols), colour = printed
        now = smooth[rows, cols].astype(np.float32) / np.maximum(white.astype(np.float32), 1.0)
        same = np.abs(now - colour).max(1) < PRINT_MATCH
        fg = fg.copy()
        fg[rows[same], cols[same]] = False
        return fg

    # -- helpers -----------------------------------------------------------------------------
    def _patch_box(self, patch: np.ndarray) -> tuple[tuple[int, int, int, int], np.ndarray]:
        """A patch's middle (60 % about its centre: no felt at its edges): its box and mask."""
        inner = self.cam.project(patch.mean(0) + 0.6 * (patch - patch.mean(0)))
        x0, y0 = np.floor(inner.min(0)).astype(int)
        x1, y1 = np.ceil(inner.max(0)).astype(int) + 1
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round(inner - (x0, y0)).astype(np.int32), 1)
        return (int(y0), int(y1), int(x0), int(x1)), mask.astype(bool)

    def card_colours(self, frame: np.ndarray) -> dict[str, np.ndarray] | None:
        """The white patch's and each colour card patch's BGR in *frame*; None when one is not
        seen whole (a hand over it: not even)."""
        out = {}
        for name, ((y0, y1, x0, x1), mask) in [("white", (self.ref_box, self.ref_mask)), *self.patch_boxes.items()]:
            pixels = frame[y0:y1, x0:x1][mask].astype(np.float32)
            if not len(pixels):
                return None
            mean = pixels.mean(0)
            if (pixels.std(0) > REFERENCE_MAX_SPREAD * mean + CARD_NOISE).any():  # a dark patch's noise is no hand
                return None
            out[name] = mean
        return out

    def correction(self, frame: np.ndarray, previous: np.ndarray | None = None) -> Correction | None:
        """The colour correction of *frame* towards the calibration's light (``vision.colour``), from
        its colour card (the frame before's if a hand is over the card); None without a card or
        when the card is not seen. Kept for the same frame (the health check and the count)."""
        if self.card is None:
            return None
        if self._correction is not None and self._correction[0] is frame:
            return self._correction[1]
        measured = self.card_colours(frame)
        if measured is None and previous is not None:
            measured = self.card_colours(previous)
        correction = fit_colour(measured, self.card) if measured is not None else None
        self._correction = (frame, correction)
        return correction

    def relit(self, frame: np.ndarray) -> str | None:
        """Why *frame*'s light is beyond what the calibration covers (None: it is not, or no colour
        card to tell by, or the card is covered), or has moved on some chip zones (:meth:`light_apart`)."""
        correction = self.correction(frame)
        why = None if correction is None else correction.relit()
        apart = self.light_apart(frame) if why is None else {}
        if apart:
            why = ("the light on " + ", ".join(f"{zone} (x{ratio:.2f})" for zone, ratio in sorted(apart.items()))
                   + " has moved against the rest of the table's since calibration")
        return why

    def felt_light(self, frame: np.ndarray) -> dict[str, float]:
        """Each chip zone's felt level in *frame*: the median of its pixels of the felt's colour at any
        level (a spot may light it beyond what counting takes for felt; brighter than the felt model, its
        colour may stray from the felt's that many times further), as a share of the felt model's
        level under the white patch's light (every fourth row and column; a zone with under
        ``LIGHT_PIXELS`` of them is left out)."""
        white = self.white(frame)
        split = self._split * (1.0 / np.maximum(white.astype(np.float32), 1.0)).reshape(1, 3)
        out = {}
        for roi in self.rois:
            if roi.zone.kind == "cards":
                continue
            parts = cv2.transform(every(frame[roi.y0:roi.y1, roi.x0:roi.x1], 4).astype(np.float32), split)
            level, glare, residual = parts[..., 0], parts[..., 1], parts[..., 2]
            # brighter than the felt model, its colour may stray that many times further (as counting allows)
            felt = ((level >= FELT_SHADE) & (level <= 10.0) & (glare <= FELT_GLARE)
                    & (np.abs(residual) <= self._felt_high[2] * np.maximum(level, 1.0)))
            here = level[felt & roi.mask[::4, ::4]]
            if len(here) >= LIGHT_PIXELS:
                out[roi.zone.name] = float(median(here))
        return out

    def light_moved(self, frame: np.ndarray) -> dict[str, float]:
        """How much each chip zone's light has moved since calibration against the rest of the table's:
        its felt level over the calibration pictures' (``ChipModels.felt_light``), over the median of
        every zone's (1: as at calibration). The white patch and the colour card cancel a change of the
        whole light, not one in part of the table; the chip models and edges hold only in the light
        they were learnt in. Needs 3 zones measured (else empty); kept for the same frame (the health
        check and the count)."""
        if self._light is not None and self._light[0] is frame:
            return self._light[1]
        reference = self.models.felt_light
        levels = self.felt_light(frame) if reference else {}
        ratio = {zone: level / reference[zone] for zone, level in levels.items() if reference.get(zone, 0.0) > 0}
        moved: dict[str, float] = {}
        if len(ratio) >= 3:
            middle = float(np.median(list(ratio.values())))
            moved = {zone: r / middle for zone, r in ratio.items()}
        self._light = (frame, moved)
        return moved

    def light_apart(self, frame: np.ndarray) -> dict[str, float]:
        """The chip zones whose light has moved beyond ``LIGHT_APART`` either way (:meth:`light_moved`):
        a spot moved or a lamp out over it."""
        return {zone: r for zone, r in self.light_moved(frame).items() if abs(np.log(r)) > np.log(LIGHT_APART)}

    def white(self, frame: np.ndarray) -> np.ndarray:
        """The reference patch's colour in *frame* (BGR)."""
        y0, y1, x0, x1 = self.ref_box
        white: np.ndarray = frame[y0:y1, x0:x1][self.ref_mask].mean(0)
        return white

    def reference_ok(self, frame: np.ndarray) -> bool:
        """Whether the reference patch is seen whole: even (a hand or a chip over part of it is not)
        and not dark. Without it no colour can be trusted."""
        y0, y1, x0, x1 = self.ref_box
        patch = frame[y0:y1, x0:x1][self.ref_mask].astype(np.float32)
        mean = patch.mean(0)
        return (float(mean.mean()) >= REFERENCE_MIN_LEVEL
                and float((patch.std(0) / np.maximum(mean, 1.0)).max()) <= REFERENCE_MAX_SPREAD)

    def _column_spans(self, crop: np.ndarray, origin: tuple[int, int], x: float, y: float, felt: np.ndarray, z: float,
                      white: np.ndarray | None = None, direction: np.ndarray | None = None,
                      not_felt: np.ndarray | None = None, own: np.ndarray | None = None,
                      card: _CardContrast | None = None) -> _ColumnSpans | None:
        """Sub-pixel silhouette height (crop coordinates) at the columns both the base and the top
        face of a stack about *z* mm high cover: there the top is the top face's rim, not the side.

        Each column's two ends are found against the felt just beyond them in that column
        (glare and vignetting change the felt from place to place), in the light-normalised
        colour space projected on the denomination's *direction* (in which its face, side,
        shading and white decorations look alike and the felt differs): the profile is then a
        plain step from felt (0) to chip whose half level is the edge, whatever the blur.
        Without a direction, the distance from the local felt is used. *not_felt* (the ROI's
        mask of pixels off the felt-and-glare plane) gives each column's rough ends; *own* (the
        stack's blob, a little widened) keeps a card or stack just behind it out of them.

        *card* (the card's pixels, its light-normalised colour and the direction from it to the
        chip's top face, card 0, chip 1): a run of rows never bridges the card's pixels; a top
        with not-felt just over it is where the column leaves the chip's colour, for the felt's
        or the card's: the lesser of the two profiles (chip 1 in both) crosses half the chip's
        level (a strip of felt between chip and card is no chip along the card's direction
        alone). Also returns, per column, whether its top is near a card (None without *card*)
        and whether the chip stands clear of it there (a step of over 0.6).
        """
        heights = np.array([0.0, self.t * self.calib.layout.max_stack, z, self.t])
        base, top, near_top, first = self.geo.rings(x, y, heights)
        base, top, near_top = base - origin, top - origin, near_top - origin
        u0, u1 = max(base[:, 0].min(), near_top[:, 0].min()), min(base[:, 0].max(), near_top[:, 0].max())
        cols = np.arange(int(np.ceil(u0 + COLUMN_MARGIN * (u1 - u0))),
                         int(np.floor(u1 - COLUMN_MARGIN * (u1 - u0))) + 1)
        r0, r1 = int(max(top[:, 1].min() - 6, 0)), int(min(base[:, 1].max() + 9, crop.shape[0]))
        cols = cols[(cols >= 0) & (cols < crop.shape[1])]
        if len(cols) < 2 or r1 - r0 < 6:
            return None
        span = slice(int(cols[0]), int(cols[-1]) + 1)  # (the columns are a run: sliced, not gathered)
        sub = crop[r0:r1, cols].astype(np.float32)  # rows x columns x BGR
        n_rows, n_cols = sub.shape[:2]
        rows = np.arange(n_rows)[:, None]
        # the run of not-felt rows that holds the base (gaps of one row bridged), per column
        scale = 1.0 / np.maximum(white.astype(np.float32), 1.0) if white is not None else np.ones(3, np.float32)
        lit = (sub * scale) @ direction if direction is not None else None  # (linear: projected once)
        if lit is not None:  # half way to the chip's colour (the direction is scaled so)
            mask = lit - (felt * scale) @ direction > 0.3
        elif not_felt is not None:
            mask = not_felt[r0:r1, span]
        else:
            mask = np.linalg.norm(sub - felt, axis=-1) > 25.0
        if own is not None:
            mask = mask & own[r0:r1, span]  # (not in place: *mask* may be a view of *not_felt*)
        bridged = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((4, 1), np.uint8)).astype(bool)
        bridged[:2] |= mask[:2]
        bridged[-2:] |= mask[-2:]
        if card is not None:  # a run never bridges a card (a strip of it between the chip and the felt)
            bridged &= ~card[0][r0:r1, span]
        if not mask.any(0).all():
            return None
        bottom = n_rows - 1 - np.argmax(mask[::-1], axis=0)
        top_row = np.where(~bridged & (rows < bottom), rows, -1).max(0) + 1
        if (bottom - top_row < 2).any():
            return None
        at = np.arange(n_cols)


        def profile(felt_rows: np.ndarray) -> np.ndarray:
            """The column's felt from the given rows, then the profile against it."""
            felt_rows = np.clip(felt_rows, 0, n_rows - 1)
            if lit is not None:
                return lit - lit[felt_rows, at].mean(0)
            along: np.ndarray = np.linalg.norm((sub - sub[felt_rows, at].mean(0)) * scale, axis=-1)
            return along

        above = profile(top_row[None, :] - np.arange(3, 7)[:, None])
        below = profile(bottom[None, :] + np.arange(3, 7)[:, None])
        inner = np.arange(*INNER_TOP)[:, None]  # the chip just inside the edge (its face at the top)
        half_top = median(above[np.minimum(top_row + inner, bottom), at], 0) / 2
        backed = clear = None
        if card is not None and not_felt is not None:  # columns whose top is against a card (or near one)
            over = np.clip(top_row[None, :] - np.arange(3, 8)[:, None] + r0, 0, not_felt.shape[0] - 1)
            backed = not_felt[over, cols[None, :]].any(0)
            clear = np.ones(n_cols, bool)
            if backed.any():  # the top: where the column leaves the chip's colour, for the felt's or the card's
                along = np.minimum(((sub - felt) * scale) @ direction, (sub * scale - card[1]) @ card[2])
                level = median(along[np.minimum(top_row + inner, bottom), at], 0)
                clear = ~backed | (level > 0.6)
                above = np.where(backed, along, above)
                half_top = np.where(backed, level / 2, half_top)
        inner = np.arange(*INNER_BOT)[:, None]  # (its side at the base)
        # at the base, the first layer's side: nearer the edge when a layer is over 1.5 px high
        near = 1 if float(base[:, 1].min() + origin[1] - first[:, 1].min()) >= 1.5 else 0
        half_bot = median(below[np.maximum(bottom - inner + near, top_row), at], 0) / 2
        # top: the first row from above (from 3 rows over the run) at or over the half level
        hit = (rows >= np.maximum(top_row - 3, 1)) & (above >= half_top)
        if not hit.any(0).all():  # a column whose profile never reaches its half level: no edge there
            return None
        i = np.argmax(hit, axis=0)
        a, b = above[i - 1, at], above[i, at]
        tops = i - 1 + np.clip((half_top - a) / np.where(b != a, b - a, 1.0), 0.0, 1.0)
        # bottom: the first row from below (from 3 rows under the run) at or over the half level
        hit = (rows <= np.minimum(bottom + 3, n_rows - 2)) & (below >= half_bot)
        if not hit.any(0).all():
            return None
        i = n_rows - 1 - np.argmax(hit[::-1], axis=0)
        a, b = below[i, at], below[i + 1, at]
        bottoms = i + np.clip((a - half_bot) / np.where(a != b, a - b, 1.0), 0.0, 1.0)
        return cols, bottoms - tops, bottoms + r0, backed, clear

    def _inlay(self, crop: np.ndarray, origin: tuple[int, int], white: np.ndarray, x: float, y: float,
               counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The top face's centre (its inlay) and the face around it, were the stack *counts* chips
        high: their median brightness (light-normalised, sum of channels) per count (NaN where
        out of the crop)."""
        scale = 1.0 / np.maximum(white.astype(np.float32), 1.0)
        centre, face = np.full(len(counts), np.nan), np.full(len(counts), np.nan)
        for k, n in enumerate(counts):
            rings = [self.geo.ring(x, y, n * self.t, self.geo.ring_shape * f) - origin for f in (0.36, 0.55, 0.75)]
            x0, y0 = np.floor(rings[2].min(0)).astype(int) - 1
            x1, y1 = np.ceil(rings[2].max(0)).astype(int) + 2
            if x0 < 0 or y0 < 0 or x1 > crop.shape[1] or y1 > crop.shape[0]:
                continue
            b = (crop[y0:y1, x0:x1].astype(np.float32) * scale).sum(-1)
            masks = []
            for ring in rings:
                m = np.zeros(b.shape, np.uint8)
                cv2.fillConvexPoly(m, np.round((ring - (x0, y0)) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
                masks.append(m.astype(bool))
            annulus = masks[2] & ~masks[1]
            if masks[0].any() and annulus.any():
                centre[k], face[k] = np.median(b[masks[0]]), np.median(b[annulus])
        return centre, face

    def _under_base(self, crop: np.ndarray, origin: tuple[int, int], felt: np.ndarray, cols: np.ndarray,
                    rims: np.ndarray) -> float:
        """The share of a stack's middle *cols* (and its layers' front *rims*: ``geo.rims``) unlike the
        *felt* around it (BGR) ``UNDER_BASE`` of a chip under its base's front rim: felt there unless a chip
        under it was missed (a chip the felt test takes for lit felt, a green one on green felt, is still
        unlike the felt beside it)."""
        base = rims[0]
        rise = float(median(base - rims[1]))
        rows = np.round(base + UNDER_BASE * rise).astype(int) - origin[1]
        cols = cols - origin[0]
        inside = (cols >= 0) & (cols < crop.shape[1]) & (rows >= 0) & (rows < crop.shape[0])
        if inside.sum() < 3:
            return 0.0
        px = crop[rows[inside], cols[inside]].astype(np.float32)
        off = np.linalg.norm(px - felt, axis=1) / max(float(np.linalg.norm(felt)), 1.0)
        return float((off > FELT_APART).mean())

    def _face_lower(self, crop: np.ndarray, origin: tuple[int, int], white: np.ndarray, cols: np.ndarray,
                    rims: np.ndarray) -> bool:
        """Whether a stack (its middle *cols* and layers' front *rims*: ``geo.rims``) shows the step from
        side to face (brighter) under a lower rim than its top's: ``FACE_STEP`` or more there, and under
        ``FACE_STEP_SHARE`` of it under the top rim. Two stacks of one colour, one touching the other just
        behind it along the line of sight, make one silhouette whose top is the one behind's face, seen
        over the front one's: read as one stack two chips taller (a held-out take: five 50s and four 50s
        behind them read as seven).
        Each rim's step: over the middle half of the columns, the median of the mean brightness 1 and 1.5
        rows over it less 1 and 1.5 rows under it."""
        px = sample(crop, origin, cols, rims[1:, None, :] + np.array([-1.5, -1.0, 1.0, 1.5])[None, :, None])
        if px is None:
            return False
        level = (px / np.maximum(white.astype(np.float32), 1.0)).sum(-1)  # rims x 4 x columns
        steps = median(level[:, :2].mean(1) - level[:, 2:].mean(1), axis=1)
        lower = float(steps[:-1].max())
        return lower >= FACE_STEP and float(steps[-1]) <= FACE_STEP_SHARE * lower

    def side_colour(self, frame: np.ndarray, stack: StackSeen) -> np.ndarray | None:
        """The side colour (3 features) of a single chip *stack* found in *frame*: what chip
        calibration learns each denomination's side from."""
        side = self.sides.side_bgr(frame, (0, 0), *self.geo.rims(stack.x, stack.y, 1))
        return None if side is None else side_features(side, self.white(frame))[0]

    def inlay_contrast(self, frame: np.ndarray, stack: StackSeen, chips: int = 1) -> float:
        """How much brighter the top face's centre (its inlay) is than the face around it, were
        *stack* (found in *frame*) *chips* high: light-normalised, sum of channels; NaN when out
        of the picture. Chip calibration learns it per denomination from single chips."""
        centre, face = self._inlay(frame, (0, 0), self.white(frame), stack.x, stack.y, [chips])
        return float(centre[0] - face[0])

    def _inlay_peaks(self, crop: np.ndarray, origin: tuple[int, int], white: np.ndarray, x: float, y: float, n: int,
                     value: int | None) -> bool:
        """Whether the top face's centre is where a stack of *n* chips has it: its inlay brighter
        than the face around it by at least ``INLAY_SHARE`` of what the chip calibration measured,
        and more so than one chip lower or higher. A top measured against a card like the chip
        that is the card's edge, not the chip's, has it chips lower. False for a denomination
        whose inlay was not seen to stand out (``INLAY_MIN``)."""
        learnt = self.models.inlay.get(value, 0.0) if value is not None else 0.0
        if learnt < INLAY_MIN:
            return False
        counts = [n - 1, n, n + 1] if n > 1 else [n, n + 1]
        centre, face = self._inlay(crop, origin, white, x, y, counts)
        at = counts.index(n)
        if np.isnan(centre).any():
            return False
        return bool(centre[at] - face[at] >= INLAY_SHARE * learnt and np.argmax(centre) == at
                    and np.sum(centre == centre[at]) == 1)

    def _clear_of_card(self, cols: np.ndarray, spans: np.ndarray, bottoms: np.ndarray, columns: np.ndarray,
                       bias: float, not_felt: np.ndarray) -> np.ndarray | None:
        """The columns of a stack whose top is seen against the felt when a card like the chip lies
        just beyond it (a red back behind a red stack): None when too few are.

        Chip and card cannot be told apart where they touch, so a column whose run of the chip's
        colour goes on into the card measures the card, never less than the stack: it is too
        tall. The stack's top is where the columns with felt just over it (``CLEAR_ROWS`` rows)
        agree on the fewest chips; the columns taller than that by over half a chip are the card's.
        """
        tops = np.floor(bottoms - spans).astype(int)
        over = tops[None, :] - np.arange(2, CLEAR_ROWS + 2)[:, None]  # the row just over it is the blurred edge
        c = np.clip(cols, 0, not_felt.shape[1] - 1)
        clear = (over.min(0) >= 0) & ~not_felt[np.clip(over, 0, None), c].any(0)
        if not clear.any():
            return None
        chips = np.array([np.interp(spans[j] - bias, columns[:, j], np.arange(len(columns)), right=np.inf)
                          for j in range(len(cols))])
        keep = clear & (chips - chips[clear].min() <= 0.5)
        return keep if keep.sum() >= max(CLEAR_COLUMNS, CLEAR_SHARE * len(cols)) else None

    def _beyond(self, blob: np.ndarray, at: tuple[int, int], origin: tuple[int, int], x: float, y: float,
                count: int) -> tuple[np.ndarray, float]:
        """The pixels of a stack's blob beyond the outline of *count* chips stacked at (x, y) (widened
        by 2 px for the blur), and a chip's footprint on the felt there (px)."""
        ring = self.geo.ring(x, y, 0.0)
        hull = cv2.convexHull(np.vstack([ring, self.geo.ring(x, y, count * self.t)]).astype(np.float32)).reshape(-1, 2)
        out = hull - hull.mean(0)
        hull = hull + 2.0 * out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6) - origin - at
        near = np.zeros(blob.shape, np.uint8)
        cv2.fillConvexPoly(near, np.round(hull * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        footprint = float(np.ptp(ring[:, 0]) * np.ptp(ring[:, 1]) * np.pi / 4)
        beyond: np.ndarray = blob & ~near.view(bool)
        return beyond, max(footprint, 1.0)

    @staticmethod
    def _beyond_outline(beyond: np.ndarray, footprint: float) -> float:
        """How much of a stack's blob lies beyond its outline (*beyond*, *footprint*: :meth:`_beyond`), in
        chip footprints: a stack standing behind it and seen beside it, merged with it in the picture,
        which no column measured."""
        return float(np.count_nonzero(beyond)) / footprint

    def _other_beside(self, f: np.ndarray, beyond: np.ndarray, value: int) -> int:
        """The largest patch (px, opened by 3 x 3) of *beyond* (a stack's blob beyond its outline; *f*:
        the blob's colour features) whose chroma is within ``OTHER_SPREADS`` of another denomination's
        face or side and over ``FOREIGN_SPREADS`` from *value*'s: a stack of another colour behind
        this one, of which only a sliver shows beside it (its blob too small for ``BEYOND_FOOTPRINTS``)."""
        px = f[beyond]
        if not len(px) or value not in self.models.chips:
            return 0
        own = [self.models.chips[value]] + ([self.models.side[value]] if value in self.models.side else [])
        others = [m for v, m in [*self.models.chips.items(), *self.models.side.items()] if v != value]
        other = (_nearest_chroma(px, others) < OTHER_SPREADS) & (_nearest_chroma(px, own) > FOREIGN_SPREADS)
        patch = np.zeros(beyond.shape, np.uint8)
        patch[beyond] = other & (px[:, 2] > CHROMA_FLOOR)
        n, _, stats, _ = _components(cv2.morphologyEx(patch, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
        return int(stats[1:, cv2.CC_STAT_AREA].max()) if n > 1 else 0

    def _foreign_side(self, crop: np.ndarray, white: np.ndarray | None, cols: np.ndarray, tops: np.ndarray,
                      bottoms: np.ndarray, value: int | None, ell: int) -> float:
        """How many rows (px) of a stack's side, under its top face, are another denomination's
        colour: a stack standing behind another in the picture, its top over the other's, reads
        as one taller stack of the colour of its top. Each row's colour is its median over the
        measured columns (a white spot covers few of them); a row is another denomination's when
        its chroma is over ``FOREIGN_SPREADS`` from the top's model and within ``OTHER_SPREADS``
        of another's, at a level between that chip's shaded side and its face."""
        if value not in self._models or white is None or len(cols) == 0 or len(self._models[value][0]) < 2:
            return 0.0
        r0 = int(np.ceil(float(np.sort(tops)[len(tops) // 2]))) + ell + 1
        r1 = int(np.floor(float(np.sort(bottoms)[len(bottoms) // 2]))) - 1
        c0, c1 = int(cols.min()), int(cols.max()) + 1
        if r1 - r0 < 2 or c0 < 0 or r0 < 0:
            return 0.0
        f = features(median(crop[r0:r1, c0:c1], axis=1), white)  # per row: (chroma b, chroma g, level)
        mean, spread = self._models[value]  # the other denominations' models, then this one's
        d = (((f[:, None, :2] - mean[None, :, :2]) / spread[None, :, :2]) ** 2).sum(-1)  # rows x models
        level = (f[:, None, 2] >= SIDE_SHADE * mean[None, :, 2]) & (f[:, None, 2] <= 1.15 * mean[None, :, 2])
        other = ((d[:, :-1] < OTHER_SPREADS ** 2) & level[:, :-1]).any(1)
        return float(np.sum(other & (d[:, -1] > FOREIGN_SPREADS ** 2)))

    def _sigma(self, x: float, y: float, count: int, shape: np.ndarray, per_chip: float) -> float:
        """The standard uncertainty (chips) of a stack's height measured at (x, y) as *count* chips.

        Three parts: the top chip's own offset on the stack (a stack is never perfectly
        aligned: each chip ``STACK_OFFSET_MM`` per axis off the one under it, so the top
        ``STACK_OFFSET_MM`` times the square root of the chips under it off the base) moves
        its top rim along the line of sight exactly as a height change does, so no picture
        can tell them apart; the edge
        measurement, from how far the columns' spans (*shape*: measured minus the model's,
        px) stray from the model's outline, the columns counting as fewer independent ones
        as far as neighbours' errors go together (lag-one correlation); and what the
        single-chip calibration of the edge bias leaves (``CALIBRATION_SIGMA``). A card or
        a stack seen behind this one, or a torn edge, shows as a shape unlike the outline:
        a large uncertainty. On rendered sets, height error over sigma has a spread of
        0.8-0.95 and stays within 3.6 on plain stacks.
        """
        top = 0.0
        if count >= 2:  # the base chip is where the stack is; the top chip may be off it
            away = np.array([x, y]) - self.geo.cam_xy
            away *= STACK_OFFSET_MM * np.sqrt(count - 1) / max(float(np.linalg.norm(away)), 1e-6)  # a random walk
            z = count * self.t
            moved = self.geo.ring(x + away[0], y + away[1], z)[:, 1].min() - self.geo.ring(x, y, z)[:, 1].min()
            top = abs(float(moved)) / per_chip
        n = len(shape)
        r = shape - shape.mean()
        power = float(r @ r)
        rho = float(np.clip((r[:-1] @ r[1:]) / max(power, 1e-9), 0.0, MAX_COLUMN_CORRELATION))
        n_eff = max(n * (1 - rho) / (1 + rho), 1.0)  # neighbouring columns' errors go together (blur)
        edge = np.sqrt(power / max(n - 1, 1) / n_eff) / per_chip
        return float(np.sqrt(top ** 2 + edge ** 2 + CALIBRATION_SIGMA ** 2))

    def _card_contrast(self, crop: np.ndarray, card_px: np.ndarray, at: tuple[int, int], shape: tuple[int, ...],
                       white: np.ndarray | None, value: int | None, not_felt: np.ndarray) -> _CardContrast | None:
        """How to tell a split stack's top from the cards beside it: (card, colour, direction),
        the card's pixels near the stack (ROI mask), its light-normalised colour and the
        direction from it to the chip's top face (card 0, chip 1). None when the cards look
        too much like the chip (a red chip against a red back) or nothing tells: such a top
        cannot be told from the card.

        The card's pixels are those of the card's colour joined to the card beside the stack
        (the chip's own white spots are of the card's colour too, but ringed by the chip's)."""
        model = self.models.chips.get(value) if value is not None else None
        if model is None or white is None:
            return None
        beside = _beside(card_px, at, shape)
        if beside is None:
            return None
        w0, w1, near = beside
        y, height = at[1], shape[0]
        scale = 1.0 / np.maximum(white.astype(np.float32), 1.0)
        win = cv2.blur(crop[:y + height, w0:w1], (3, 3)).astype(np.float32) * scale
        card = np.median(win[near], 0)
        cb, cg, v = model.mean
        chip = np.array([cb * 3 * v, cg * 3 * v, (1 - cb - cg) * 3 * v], np.float32)
        if float(model.distance(features(card[None, :] / scale, white))[0]) < CARD_SEPARATION:
            return None
        d = (chip - card) / float((chip - card) @ (chip - card))
        like = ((((win - card) @ d) < 0.5) & not_felt[:y + height, w0:w1]).astype(np.uint8)
        n, labels = cv2.connectedComponents(like, connectivity=4)
        joined = np.zeros(n, bool)
        joined[np.unique(labels[near & (like > 0)])] = True
        joined[0] = False
        region = np.zeros_like(card_px)
        region[:y + height, w0:w1] = joined[labels]
        return region, card, d.astype(np.float32)

    def _split_colour(self, crop: np.ndarray, card_px: np.ndarray, lying: np.ndarray, at: tuple[int, int],
                      shape: tuple[int, ...], white: np.ndarray | None, not_felt: np.ndarray, own: np.ndarray,
                      ell: int) -> np.ndarray | None:
        """A split stack's top face colour before its denomination is known: the top rows, in its
        middle columns, of its blob joined again to its pixels on the card area, less the pixels
        of the card's colour joined to the card beside it (a split blob's own top rows may be
        its side, the card area having taken its top). None if no card is seen beside it."""
        if white is None:
            return None
        beside = _beside(lying, at, shape)  # the card beside it, not a stack standing beside it
        if beside is None:
            return None
        w0, w1, near = beside
        x, y = at
        height, width = shape
        lo, hi = max(x - 3, 0), min(x + width + 3, card_px.shape[1])  # the stack's own columns
        f = features(cv2.blur(crop[:y + height, w0:w1], (3, 3)), white)
        med = np.median(f[near], 0)
        spread = np.maximum(1.4826 * np.median(np.abs(f[near] - med), 0), (0.012, 0.012, 0.04))
        like = ((np.abs((f - med) / spread).max(-1) < 4) & not_felt[:y + height, w0:w1]).astype(np.uint8)
        n, labels = cv2.connectedComponents(like, connectivity=4)
        joined = np.zeros(n, bool)
        joined[np.unique(labels[near & (like > 0)])] = True
        joined[0] = False
        ext = (own[:y + height, lo:hi] | card_px[:y + height, lo:hi]) & ~joined[labels[:, lo - w0:hi - w0]]
        cols = np.arange(x + width // 4, x + width - width // 4)
        cols = cols[(cols >= lo) & (cols < hi)]
        cols = cols[ext[:, cols - lo].any(0)]
        if len(cols) < 2:
            return None
        first = np.argmax(ext[:, cols - lo], axis=0).astype(float)
        return self._top_colour(crop, white, cols, first, ell)

    def _top_colour(self, crop: np.ndarray, white: np.ndarray | None, cols: np.ndarray, tops: np.ndarray,
                    ell: int) -> np.ndarray | None:
        """Median colour of the top face just under the measured tops (crop rows) at *cols*."""
        if white is None:
            return None
        r0 = int(max(np.floor(tops.min()), 0))
        r1 = int(min(np.ceil(tops.max()) + ell + 2, crop.shape[0]))
        c0, c1 = int(cols.min()), int(cols.max()) + 1
        if r1 - r0 < 3:
            return None
        win = cv2.blur(crop[r0:r1, c0:c1], (3, 3))
        rows = np.ceil(tops - r0).astype(int)[None, :] + 1 + np.arange(max(ell - 2, 2))[:, None]
        ok = rows < win.shape[0]
        pix = win[np.minimum(rows, win.shape[0] - 1), (cols - c0)[None, :]][ok]
        if len(pix) < 3:
            return None
        colour: np.ndarray = np.median(features(pix, white), 0)
        return colour

    def not_felt(self, crop: np.ndarray, white: np.ndarray, zone: str | None = None) -> np.ndarray:
        """Pixels that are not felt: not the felt's colour at some light level plus some white glare (the
        level's bounds about *zone*'s felt level in the calibration pictures, where known)."""
        scale = (1.0 / np.maximum(white.astype(np.float32), 1.0)).reshape(1, 3)
        parts = cv2.transform(crop.astype(np.float32), self._split * scale)  # (felt level, glare, residual)
        low, high = self._felt_bounds.get(zone or "", (self._felt_low, self._felt_high))
        off: np.ndarray = cv2.inRange(parts, low, high) == 0
        return off

    # -- counting ----------------------------------------------------------------------------
    def count(self, frame: np.ndarray, previous: np.ndarray | None = None, *,
              collect: list[np.ndarray] | None = None) -> FrameResult:
        """What every zone holds in *frame*; *previous* (the frame before) detects motion.

        *collect*, for chip calibration: each stack's own pixels (light-normalised BGR, N x 3)
        are appended to it as the stack is read.
        """
        if frame.shape[1::-1] != tuple(self.calib.image_size):
            raise ValueError(f"frame is {frame.shape[1]}x{frame.shape[0]}, the calibration "
                             f"{self.calib.image_size[0]}x{self.calib.image_size[1]}")
        white = self.white(frame)
        seen = self.reference_ok(frame)
        if not seen and previous is not None and self.reference_ok(previous):
            white = self.white(previous)  # an arm passing over the patch: the light of a frame ago
        if (not seen and (previous is None or not self.reference_ok(previous))
                or self.card is not None and self.correction(frame, previous) is None):
            # the white patch or the colour card covered (or dark) for more than a frame: nothing is read
            zones = {r.zone.name: ZoneCount(r.zone.name, ZoneStatus.OCCLUDED, 0, (), (), 0.0, True)
                     for r in self.rois if r.zone.kind != "cards"}
            cards = {r.zone.name: CardSeen(r.zone.name, False, False, True)
                     for r in self.rois if r.zone.kind == "cards"}
            self._last_grey = (frame, _half_grey(frame))
            return FrameResult(zones, cards, _bgr(float(c) for c in white))
        raw_white, relit, correction = white, None, self.correction(frame, previous)
        if correction is not None and correction.uneven():  # a spot across the card: the white patch alone
            correction = None
        if correction is not None and self.card is not None:
            relit = correction.relit()
            if relit is None:
                white = correction.white(self.card)  # the crops are in the calibration's light
        zones, cards = {}, {}
        change = None
        grey = _half_grey(frame)
        if previous is not None:  # half-scale grey difference, once for the whole frame
            last = self._last_grey
            before = last[1] if last is not None and last[0] is previous else _half_grey(previous)
            change = (cv2.absdiff(grey, before) > MOTION_LEVEL).view(np.uint8)  # (0 or 1)
        self._last_grey = (frame, grey)  # the next frame's *previous*: not converted twice
        for roi in self.rois:
            crop = frame[roi.y0:roi.y1, roi.x0:roi.x1]
            here = change[roi.y0 // 2:roi.y1 // 2, roi.x0 // 2:roi.x1 // 2] if change is not None else None
            motion = here is not None and cv2.countNonZero(here) / max(here.size, 1) > MOTION_SHARE
            if roi.zone.kind == "cards":  # cards are big: half scale is plenty
                crop = every(crop, 2)
            elif relit is not None:  # a light the chip models do not know: nothing is read with confidence
                zones[roi.zone.name] = ZoneCount(roi.zone.name, ZoneStatus.UNCERTAIN, 0, (), (), 0.0, motion,
                                                 why=("relit",))
                continue
            if correction is not None and relit is None:
                crop = correction.apply(crop)
            smooth = cv2.blur(crop, (3, 3))
            white_here = white if roi.zone.kind != "cards" or relit is None else raw_white
            fg = self.not_felt(smooth, white_here, roi.zone.name)
            if roi.zone.kind != "cards":
                fg = self._unprinted(roi.zone.name, fg, smooth, white_here)
            f = _Lazy(smooth, white_here)
            if roi.zone.kind == "cards":
                cards[roi.zone.name] = self._card(roi.mask[::2, ::2], roi.zone.name, f, fg, motion)
            else:
                present = frozenset(name for name, seen in cards.items() if seen.present)
                zones[roi.zone.name] = self._zone(roi, crop, f, fg, motion, white, present, collect)
        hiding.behind(self.geo, self.rois, zones, self.calib.layout.max_stack)
        for name, moved in self.light_moved(frame).items() if relit is None else ():  # lit otherwise than at
            # calibration (a spot read as an arm too: not held as one), or a little so and a top face read weakly
            far = abs(math.log(moved))
            if far > math.log(LIGHT_APART) or far > math.log(LIGHT_ASIDE) and any(
                    s.colour_confidence < WEAK_COLOUR for s in zones[name].stacks):
                zones[name] = dataclasses.replace(zones[name], status=ZoneStatus.UNCERTAIN, confidence=0.0,
                                                  why=zones[name].why + ("light",))
        return FrameResult(zones, cards, _bgr(float(c) for c in raw_white), relit)

    def _card(self, inside: np.ndarray, name: str, f: _Lazy, fg: np.ndarray, motion: bool) -> CardSeen:
        area = inside.sum()
        sel = inside & fg
        present = sel.sum() > 0.15 * area
        face_up = False
        if present:
            c = f[sel]
            white = (c[:, 2] > 0.7) & (np.abs(c[:, 0] - 1 / 3) < 0.05) & (np.abs(c[:, 1] - 1 / 3) < 0.05)
            face_up = bool(white.sum() > 0.55 * len(c))
        return CardSeen(name, bool(present), face_up, motion)

    def _zone(self, roi: ZoneRoi, crop: np.ndarray, f: _Lazy, fg: np.ndarray, motion: bool,
              white: np.ndarray, cards_present: frozenset[str] = frozenset(),
              collect: list[np.ndarray] | None = None) -> ZoneCount:
        name = roi.zone.name
        felt_bgr = None
        fg_raw = fg
        cut = None  # where cards lie in this ROI (card areas seen holding a card)
        for area, pixels in roi.cards.items():
            if area in cards_present:
                cut = pixels if cut is None else cut | pixels
        standing: np.ndarray | None = None  # when a stack is merged with a card: what stands,
        card_px: np.ndarray | None = None  # what lies on the card areas
        fg = cv2.morphologyEx(fg.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = _components(fg)
        whole_labels = labels  # each blob's chip width at its bottom's middle, all at once
        widths = self.calib.chip_diameters_px(self.geo.rough_bases(
            np.column_stack([roi.x0 + stats[1:, 0] + stats[1:, 2] / 2, roi.y0 + stats[1:, 1] + stats[1:, 3]])))
        h, w = fg.shape
        stacks, worst = [], 1.0
        specks: list[tuple[float, float, float, float]] = []  # each speck's centre (px in the crop), area, chip width
        work: list[tuple[np.ndarray, int, np.ndarray, np.ndarray | None, bool, bool]] = [  # split: the pixels a
            (labels, i, stats[i], None, False, False) for i in range(1, n)]  # card may hold; halved: one of two side
        while work:  # by side; thinned: cut from what thin prints joined it to
            labels, i, (x, y, bw, bh, area), split, halved, thinned = work.pop()
            whole = split is None and not (halved or thinned)  # as the felt test left it, not a piece cut off
            if area < 12 and not whole:
                continue  # a sliver cut off a blob
            u = roi.x0 + x + bw / 2
            width = (float(widths[i - 1]) if labels is whole_labels
                     else self.calib.chip_diameter_px(*self.geo.rough_base(u, roi.y0 + y + bh)))
            if area < 12 or area < 0.1 * width * width:  # a speck: too small to measure
                if whole and roi.mask[y + bh // 2, x + bw // 2]:
                    specks.append((x + bw / 2, y + bh / 2, float(area), width))
                continue
            blob = labels[y:y + bh, x:x + bw] == i
            low = blob[max(bh - int(0.4 * width), 0):]  # the base's near half
            base_cols = np.flatnonzero(low.any(0)) if low.any() else np.arange(bw)
            if split is None and cut is not None:  # a card lying behind, merged with the stack in the picture?
                own_low = low & ~cut[y + bh - len(low):y + bh, x:x + bw]  # the base is never on a card
                cols = np.flatnonzero(own_low.any(0)) if own_low.any() else base_cols
                band = np.zeros(bw, bool)
                band[max(cols[0] - 3, 0):cols[-1] + 4] = True
                if (blob & cut[y:y + bh, x:x + bw] & ~band).sum() > 0.05 * width * width:
                    part = np.zeros_like(fg)  # the blob without the card areas: the stack's visible part
                    part[y:y + bh, x:x + bw] = blob & ~cut[y:y + bh, x:x + bw]
                    part = cv2.morphologyEx(part, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
                    m, sub, sub_stats, _ = _components(part)
                    if standing is None or card_px is None:
                        standing = _standing(fg_raw, cut)
                        card_px = cut & fg_raw & ~standing
                    beside = card_px.copy()  # the card areas' not-felt pixels and the whole blob: the stack's
                    beside[y:y + bh, x:x + bw] |= blob  # top may be there (beyond a band the card area cut)
                    work += [(sub, k, sub_stats[k], beside, halved, thinned) for k in range(1, m)]
                    continue
            touches = x == 0 or y == 0 or x + bw == w or y + bh == h
            max_area = width * (width + self.calib.layout.max_stack * 1.6)
            if area > 1.6 * max_area or (touches and area > 1.5 * width * width):
                if _over(blob, (x, y), roi) <= 0.2 * width * width:
                    continue  # a card or an arm beside the zone
                # over the zone itself: an arm, unless a thin print (a line) joins a stack to the table's edge or
                # an arm beside the zone: then cut where thin, if little of the zone is cut away
                thin = int(THIN * width) | 1
                whole = labels == i
                part = cv2.morphologyEx(whole.astype(np.uint8), cv2.MORPH_OPEN, np.ones((thin, thin), np.uint8))
                if thinned or (whole & ~part.astype(bool) & roi.mask).sum() > THIN_CUT * width * width:
                    return ZoneCount(name, ZoneStatus.OCCLUDED, 0, (), (), 0.0, motion)
                m, sub, sub_stats, _ = _components(part)
                work += [(sub, k, sub_stats[k], split, halved, True) for k in range(1, m)]
                continue
            u = roi.x0 + x + float(np.nonzero(low)[1].mean()) if low.any() else u
            rough = self.geo.rough_base(u, roi.y0 + y + bh - 0.5)
            if roi.zone.inside(*rough) < -EDGE_MM - BASE_REFINED and _over(blob, (x, y), roi) <= 0.2 * width * width:
                continue  # another zone's, already from its rough base (the refined one is within BASE_REFINED)
            cx, cy = self.geo.base(u, roi.y0 + y + bh - 0.5, rough)
            inside = roi.zone.inside(cx, cy)
            if inside < -EDGE_MM and self._elsewhere(blob, (x, y), roi, cx, cy, width):
                continue  # another zone's
            base_w = base_cols[-1] - base_cols[0] + 1
            one = 0.6 * width <= base_w <= 1.5 * width  # one stack's width
            if inside < EDGE_MM:  # on the zone's edge, or over the zone from beyond it (a stack joined to a printed
                # line, whose lowest point is then the line's): whose chips these are is the dealer's call
                worst = min(worst, 0.2)
                stacks.append(StackSeen(cx, cy, None, 0, 0.2, why="edge"))
                continue
            if TWO_BASES[0] * width <= base_w <= TWO_BASES[1] * width and not halved:
                # two stacks touching side by side: each measured on its half of the blob (cut between bases)
                part = np.zeros_like(fg)
                part[y:y + bh, x:x + bw] = blob
                part[:, x + (base_cols[0] + base_cols[-1]) // 2] = 0
                m, sub, sub_stats, _ = _components(part)
                work += [(sub, k, sub_stats[k], split, True, thinned) for k in range(1, m)]
                continue
            if not one:
                if thinned:  # cut from an arm, not from a printed line: the arm is over the zone
                    return ZoneCount(name, ZoneStatus.OCCLUDED, 0, (), (), 0.0, motion)
                worst = min(worst, 0.2)  # not one stack: touching stacks, a card, a finger
                stacks.append(StackSeen(cx, cy, None, 0, 0.2, why="blob"))
                continue
            if felt_bgr is None:  # the felt's colour here, under this light
                bare = (~fg_raw[::2, ::2]).astype(np.uint8)  # (at half scale)
                felt_bgr = np.array((cv2.mean(every(crop, 2), bare) if cv2.countNonZero(bare) > 20
                                     else cv2.mean(crop))[:3], np.float32)
            own = np.zeros_like(fg)  # this stack's pixels and 2 px around: not a card or stack beside it
            y0, x0 = max(y - 2, 0), max(x - 2, 0)
            own[y0:y + bh + 2, x0:x + bw + 2] = cv2.dilate((labels[y0:y + bh + 2, x0:x + bw + 2] == i).astype(np.uint8),
                                                          np.ones((5, 5), np.uint8))
            seen = self._stack(blob, f[y:y + bh, x:x + bw], cx, cy, bh, crop, (roi.x0, roi.y0), felt_bgr,
                               white, (x, y), fg_raw, own.astype(bool), split, standing, collect)
            if math.hypot(seen.x - cx, seen.y - cy) > BASE_MOVED * 2 * self.r:  # measured off its blob's base
                seen = StackSeen(cx, cy, None, 0, 0.2, why="unmeasured")  # (a card behind it taken for its top)
            elif seen.confidence < MIN_CONFIDENCE and not seen.why:  # given up before a count
                seen = dataclasses.replace(seen, why="unmeasured")
            stacks.append(seen)
            worst = min(worst, seen.confidence)
        unread = _unread(specks)
        if unread is not None:  # specks together as large as a chip's part: a chip seen only in pieces
            worst = min(worst, 0.2)
            stacks.append(StackSeen(*self.geo.base(roi.x0 + unread[0], roi.y0 + unread[1]), None, 0, 0.2, why="specks"))
        unseen = self._unseen(roi, crop, stacks, cut) if self._empty and worst >= MIN_CONFIDENCE else None
        if unseen is not None:  # a denomination that looks like the felt could lie there, unread
            worst = min(worst, 0.2)
            stacks.append(StackSeen(*self.geo.base(roi.x0 + unseen[0], roi.y0 + unseen[1]), None, 0, 0.2, why="unseen"))
        counts: dict[int, int] = {}
        for s in stacks:
            for v in s.chips:
                counts[v] = counts.get(v, 0) + 1
        chips = tuple(sorted(((v, c) for v, c in counts.items() if c), reverse=True))
        amount = sum(v * c for v, c in chips)
        status = ZoneStatus.OK if worst >= MIN_CONFIDENCE else ZoneStatus.UNCERTAIN
        why = tuple(dict.fromkeys(s.why for s in stacks if s.confidence < MIN_CONFIDENCE))
        return ZoneCount(name, status, amount, chips, tuple(stacks), float(worst), motion, why)

    def _stack(self, blob: np.ndarray, f: np.ndarray, cx: float, cy: float, span_px: int,
               crop: np.ndarray, origin: tuple[int, int], felt_bgr: np.ndarray,
               white: np.ndarray, at: tuple[int, int], not_felt: np.ndarray, own: np.ndarray,
               card_px: np.ndarray | None = None, standing: np.ndarray | None = None,
               collect: list[np.ndarray] | None = None) -> StackSeen:
        top_z = self.t * self.calib.layout.max_stack
        ring0, ring1 = self.geo.ring(cx, cy, 0.0), self.geo.ring(cx, cy, self.t)
        rise = max(float(ring0[:, 1].min() - ring1[:, 1].min()), 0.3)  # px per chip at the top
        rough = (span_px - float(np.ptp(ring0[:, 1]))) / rise * self.t  # mm, from the blob's rows
        z = float(np.clip(rough - 2 * self.t, 0, top_z))
        # the denomination first: its colour sets the direction the edges are measured in
        rows = np.flatnonzero(blob.any(1))
        width = blob.shape[1]
        top = rows[0] if len(rows) else 0
        ell = max(2, int(round(0.9 * float(np.ptp(ring0[:, 1])))))
        inner = slice(width // 4, width - width // 4)
        face = f[top:top + ell, inner][blob[top:top + ell, inner]]
        if len(face) < 3:
            return StackSeen(cx, cy, None, 0, 0.0)
        colour = median(face, 0)
        value, colour_conf = self.models.classify(colour) if self.models.chips else (None, 0.0)
        if collect is not None and white is not None:  # chip calibration: the chip's own pixels
            core = cv2.erode(blob.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
            x, y = at
            pix = crop[y:y + blob.shape[0], x:x + width][core].astype(np.float32)
            collect.append(pix / np.maximum(white.astype(np.float32), 1.0))
        direction = self._directions.get(value) if value is not None else None
        card = card_px is not None and card_px.any()
        seen = None
        if card:  # the denomination from the top face, which the card area may have cut off the blob
            assert card_px is not None  # (card says so)
            lying = card_px & ~standing if standing is not None else card_px  # not a stack beside it
            again = self._split_colour(crop, card_px, lying, at, blob.shape, white, not_felt, own, ell)
            read, read_conf = self.models.classify(again) if again is not None and self.models.chips else (None, 0.0)
            if read in self._directions and read_conf >= MIN_CONFIDENCE:
                seen = self._card_contrast(crop, lying, at, blob.shape, white, read, not_felt)
                if seen is not None:
                    value, colour_conf, colour, direction = read, read_conf, again, self._directions[read]
            if seen is None:
                seen = self._card_contrast(crop, lying, at, blob.shape, white, value, not_felt)
        own0 = own

        def extend(seen: _CardContrast | None) -> np.ndarray:
            """The stack's pixels on the card area are its own, less a card unlike the chip."""
            assert card_px is not None  # (extended only when the stack is split by a card area)
            lo, hi = max(at[0] - 3, 0), at[0] + blob.shape[1] + 3
            mine = own0.copy()
            mine[:at[1] + blob.shape[0], lo:hi] |= card_px[:at[1] + blob.shape[0], lo:hi]
            return mine & ~seen[0] if seen is not None else mine

        like = card and seen is None  # a card like the chip (a red back behind a red stack)
        own = extend(seen) if card else own0
        keep = None
        for attempt in range(3):  # the base from the blob's bottom, then from the sub-pixel bottom edges
            measured = self._column_spans(crop, origin, cx, cy, felt_bgr, z, white, direction, not_felt, own,
                                          seen)
            if measured is None:
                return StackSeen(cx, cy, None, 0, 0.0)
            cols, spans, bottoms, backed, clear = measured
            base_rows = self.geo.boundary(cx, cy, 0.0, cols + origin[0], upper=False)  # the base's lower outline
            shift = float((bottoms - base_rows + origin[1]).mean())
            if card:  # the split blob's rows miss its part on the card area: from the spans
                span_px = max(span_px, int(np.ceil(float(median(spans)))))
                rough = (span_px - float(np.ptp(ring0[:, 1]))) / rise * self.t
                z = float(np.clip(rough - 2 * self.t, 0, top_z))
            if seen is not None:
                again = self._top_colour(crop, white, cols, bottoms - spans, ell)  # the face, not the card
                if again is None:
                    return StackSeen(cx, cy, None, 0, 0.0)
                colour = again
                read, colour_conf = self.models.classify(again) if self.models.chips else (None, 0.0)
                if read != value:  # measured along the wrong denomination's colours: again, or give up
                    if attempt == 2 or read not in self._directions or colour_conf < MIN_CONFIDENCE:
                        return StackSeen(cx, cy, None, 0, 0.0)
                    value, direction = read, self._directions[read]
                    seen = self._card_contrast(crop, lying, at, blob.shape, white, value, not_felt)
                    if seen is None:  # this one looks like the card
                        return StackSeen(cx, cy, None, 0, 0.0)
                    own = extend(seen)
                    continue
            if attempt == 2 or (attempt == 1 and seen is None) or (abs(shift) < 0.4 and (attempt == 1 or seen is None)):
                break  # a split stack is measured twice at least: its height, hence its columns, from the spans
            if abs(shift) >= 0.4:
                u0, v0 = self.geo.base_pixel((cx, cy))
                cx, cy = self.geo.base(u0, v0 + shift)
        against = np.zeros(len(cols), bool)
        if seen is not None and backed is not None:  # per column: the top against the felt, or clear of a card
            # and the chip's colour (neither the felt's nor the card's) just under it: a top found on a
            # strip of card a pixel or two wide (blurred into the chip and the felt) is no top
            under = np.clip(np.ceil(bottoms - spans).astype(int)[None, :] + np.arange(1, 5)[:, None],
                            0, crop.shape[0] - 1)
            px = crop[under, np.clip(cols, 0, crop.shape[1] - 1)].astype(np.float32)
            scale = 1.0 / np.maximum(white.astype(np.float32), 1.0)
            chip = np.minimum(((px - felt_bgr) * scale) @ direction, (px * scale - seen[1]) @ seen[2]).min(0) > 0.5
            against, keep = backed, clear & chip  # the other columns are not measured
            if keep.sum() < KEEP_SHARE * len(cols):
                return StackSeen(cx, cy, None, 0, 0.0)
        most = int(min(self.calib.layout.max_stack, np.ceil(rough / self.t) + 3))  # rough includes the ellipse
        columns = self.geo.predicted_spans(cx, cy, cols + origin[0], most, base_rows)  # 0..most chips
        bias = self.models.bias(value)  # what the edges measure beyond the geometry (blur, optics)

        def height(keep: np.ndarray) -> tuple[float, float]:  # chips, from the mean span over the columns kept
            predicted = columns[:, keep].mean(1)
            per_chip = (predicted[-1] - predicted[0]) / max(len(predicted) - 1, 1)
            span = float(spans[keep].mean()) - bias
            return float(np.interp(span, predicted, np.arange(len(predicted)), left=0.0,
                                   right=len(predicted) - 1 + (span - predicted[-1]) / per_chip)), per_chip

        keep = np.ones(len(cols), bool) if keep is None else keep
        if like:  # a card like the chip just over the stack: measured only where felt shows between them
            keep = self._clear_of_card(cols, spans, bottoms, columns, bias, not_felt)
            if keep is None:
                return StackSeen(cx, cy, None, 0, 0.0)
            wanted = max(1, int(round(height(keep)[0])))  # the count the top face's centre must confirm
            if not self._inlay_peaks(crop, origin, white, cx, cy, wanted, value):
                return StackSeen(cx, cy, None, 0, 0.0)
        valid = keep.copy()  # the columns measured against the felt or a card unlike the chip
        est, per_chip = height(keep)
        # columns whose span strays from the others' by over OUTLIER_PX (a white spot on the top face's
        # rim read as felt, a card's edge just behind) are left out when most columns agree
        k = int(min(max(round(est), 0), len(columns) - 1))
        shape = spans - columns[k]
        agree = (np.abs(shape - median(shape[keep])) <= OUTLIER_PX) & keep
        if agree.sum() >= KEEP_SHARE * len(cols) and not agree.all():
            keep = agree
            est, per_chip = height(keep)
            k = int(min(max(round(est), 0), len(columns) - 1))
        excess = round(float(spans[keep].mean() - columns[1, keep].mean()), 3)  # what chip calibration learns
        count = max(1, int(round(est)))
        if like and count != wanted:  # the columns left after the outliers say otherwise: not confirmed
            return StackSeen(cx, cy, None, 0, 0.0)
        sigma = self._sigma(cx, cy, k, (spans - columns[k])[keep], per_chip) * np.sqrt(len(cols) / keep.sum())
        if against[keep].any():  # a top against a card: its edge's blur and the card's own edge
            sigma = float(np.hypot(sigma, CARD_SIGMA * against[keep].mean()))
        stray = np.abs(shape[valid] - median(shape[valid])).max() > STRAY_CHIPS * per_chip
        middle, rims = self.geo.rims(cx, cy, count)  # where the side is read and the face's step
        layers, foreign = ((), False) if value is None else self.sides.read(crop, origin, white, middle, rims, value)
        side = not layers and (foreign or self._foreign_side(crop, white, cols[keep], (bottoms - spans)[keep],
                                                             bottoms[keep], value, ell) >= FOREIGN_CHIPS * per_chip)
        stray |= side  # chips of another denomination under this top, not read one by one: a stack behind it?
        # not felt just under the base the edges found: a bottom chip unlike the top's colour (a green one on
        # green felt under a red one, measured along the red's direction) that the edges missed
        under = self._under_base(crop, origin, felt_bgr, middle, rims) if not stray else 0.0
        stray |= not card and under >= BASE_COVERED
        if count >= 2 and value in self.sides.side_unsure:  # vouched for chip by chip: and felt under it, seen
            stray |= under >= VOUCHED_BASE  # (a grey 50 under green 200s the edges missed)
        if not stray:  # its blob holds more than this stack: one standing behind it, seen beside it
            beyond, footprint = self._beyond(blob, at, origin, cx, cy, count)
            stray = not card and self._beyond_outline(beyond, footprint) > BEYOND_FOOTPRINTS
            if not stray and value is not None:  # or only a sliver of it, of another colour
                stray = self._other_beside(f, beyond, value) >= BEYOND_OTHER * footprint
            if not stray and not card and not layers and count >= 2:  # or over its top, of its colour
                stray = self._face_lower(crop, origin, white, middle, rims)
        if stray:
            sigma = max(sigma, 1.0)  # not one stack's outline (a card, a stack behind it)
        count_conf, inlay = count_confidence(est, sigma), None
        if count_conf < MIN_CONFIDENCE and not stray and not layers and est >= 0.5:  # between two counts: the top
            # face's centre (not for a mixed stack: its chips were read at the height measured)
            near = sorted({max(1, int(np.floor(est))), max(1, int(np.ceil(est)))})
            confirmed = [n for n in near if self._inlay_peaks(crop, origin, white, cx, cy, n, value)]
            if len(confirmed) == 1 and abs(est - confirmed[0]) <= INLAY_REACH:
                count, count_conf, inlay = confirmed[0], INLAY_CONFIDENCE, confirmed[0]
        why = ("" if min(count_conf, colour_conf) >= MIN_CONFIDENCE
               else "colour" if value is None or colour_conf < MIN_CONFIDENCE
               else "side" if side else "outline" if stray else "height")
        return StackSeen(round(cx, 1), round(cy, 1), value, count, round(min(count_conf, colour_conf), 3),
                         _bgr(round(float(c), 4) for c in colour), excess, round(est, 3), round(colour_conf, 3),
                         round(sigma, 4), inlay, layers, why)


def count_confidence(est: float, sigma: float) -> float:
    """A count's confidence from its height *est* (chips) and that height's uncertainty *sigma*:
    at least MIN_CONFIDENCE only when the half-way point to the next count is over
    ``CONFIDENT_SIGMAS`` uncertainties away: a wrong count then needs an error of over
    0.5 + CONFIDENT_SIGMAS * sigma chips: 4 to 7.5 sigma for a plain stack (sigma 0.08-0.2)."""
    if est < 0.5:
        return 0.0
    off = abs(est - round(est))
    return float(np.clip((0.5 - off) / (2 * CONFIDENT_SIGMAS * max(sigma, 1e-6)), 0.0, 1.0))


def felt_model(calib: TableCalibration, frame: np.ndarray, zone: str | None = None) -> ColourModel:
    """The felt's colour model from *frame*'s chip zones (or *zone*), mostly bare felt (robust to a few chips)."""
    counter = ChipCounter(calib, ChipModels({}, ColourModel((0.25, 0.6, 0.25), (1, 1, 1))))
    rois = [r for r in counter.rois if (r.zone.name == zone if zone else r.zone.kind in ("bet", "pot"))]
    if not rois:
        raise ValueError(f"camera {calib.layout.camera} counts no zone {zone!r}" if zone else
                         f"camera {calib.layout.camera} counts no chip zone")
    white = counter.white(frame)
    f = np.vstack([features(frame[r.y0:r.y1, r.x0:r.x1], white)[r.mask] for r in rois])
    med = np.median(f, 0)
    spread = np.maximum(1.4826 * np.median(np.abs(f - med), 0), (0.012, 0.012, 0.04))
    return ColourModel(tuple(med.tolist()), tuple(spread.tolist()))


def top_faces(calib: TableCalibration, frame: np.ndarray, felt: ColourModel) -> list[StackSeen]:
    """The stacks found in every chip zone before any colour model: what chip calibration learns from."""
    result = ChipCounter(calib, ChipModels({}, felt)).count(frame)
    return [s for zc in result.zones.values() for s in zc.stacks]


def learn_chips(calib: TableCalibration, shows: dict[int, np.ndarray], zone: str | None = None) -> ChipModels:
    """Colour models from one picture per denomination of single chips lying in the chip zones
    (the felt's colour is read in the chip zones, or in *zone*: mostly bare felt).

    The same pictures give each denomination the colour direction its edges are measured
    in (``chips.edge_direction``, from its chips' pixels) and calibrate the edge bias: a
    single chip's silhouette, measured as a stack's is, should be exactly one chip's
    geometry; the median excess is subtracted from every stack. They also measure how much
    brighter each denomination's centre (its inlay) is than its face (``ChipCounter.inlay_contrast``).
    A denomination whose chips are found less often than ``VISIBLE_SHARE`` of the best-found one's,
    or never, looks like the felt: it is kept as ``hidden`` (never counted; the counter checks each
    zone against the empty table's picture, so the table calibration must hold one).
    """
    from calibration.chips import edge_direction, learn
    felt = felt_model(calib, shows[min(shows)], zone)
    finder = ChipCounter(calib, ChipModels({}, felt))
    seen, pixels = {}, {}
    for v, img in shows.items():
        collected: list[np.ndarray] = []
        result = finder.count(img, collect=collected)
        seen[v] = [s for zc in result.zones.values() for s in zc.stacks if s.colour is not None]
        pixels[v] = np.vstack(collected) if collected else np.zeros((0, 3), np.float32)
    found = {v: len(stacks) for v, stacks in seen.items()}
    visible = [v for v, n in found.items() if n]  # found at all: not refused for a colour model near the felt's
    most = max(found.values(), default=0)
    hidden = tuple((v, n, most) for v, n in sorted(found.items()) if n < VISIBLE_SHARE * most)
    why = (f"chips {', '.join(f'{v} ({n} found)' for v, n, _ in hidden)} found less often than the others "
           f"({most}): they look like the felt under this light")
    if len(shows) - len(hidden) < 2:  # nothing left to count by
        raise ValueError(why)
    if hidden and calib.empty is None:  # some of its chips lie unseen on this felt: so would some of a stack's
        raise ValueError(f"{why}, and the table calibration holds no picture of the empty table to check the zones "
                         "against")
    samples = {v: np.array([s.colour for s in stacks]).reshape(-1, 3) for v, stacks in seen.items() if stacks}
    directions = {v: edge_direction(p, felt) for v, p in pixels.items() if len(p) > 10}
    models = learn(samples, felt, None, directions, seen=visible)
    counter = ChipCounter(calib, models)
    excess, inlay, side, on_print = {}, {}, {}, {}
    for v, img in shows.items():
        if not found[v]:
            continue
        stacks = [s for zc in counter.count(img).zones.values() for s in zc.stacks if s.colour is not None]
        mine = [s for s in stacks if s.value == v] or stacks
        clean = [s for s in mine if not counter.near_print(s)]  # a chip on the felt's print: its edges and
        if len(clean) < len(mine):  # side hold the print's colour
            on_print[v] = (len(mine) - len(clean), len(mine))
        mine = clean if len(clean) >= PRINT_CLEAN else mine  # (too few others: all, which the print may make look
        # alike)
        if mine:
            excess[v] = float(np.median([s.excess_px for s in mine]))
            inlay[v] = float(np.median([counter.inlay_contrast(img, s) for s in mine]))
            sides = [c for c in (counter.side_colour(img, s) for s in mine) if c is not None]
            if sides:
                side[v] = np.array(sides)
    models = learn(samples, felt, excess, directions, inlay, side, visible)
    card, note = colour_card(finder, list(shows.values()))
    lit = [counter.felt_light(img) for img in shows.values()]  # where the light falls on each zone (the felt's)
    felt_light = {z: float(np.median([m[z] for m in lit if z in m])) for z in sorted(set().union(*lit))}
    return dataclasses.replace(models, card=card, card_note=note, on_print=on_print, felt_light=felt_light,
                               hidden=hidden)


def colour_card(finder: ChipCounter, pictures: list[np.ndarray]) -> tuple[CardReference | None, str]:
    """The camera's colour card as the calibration *pictures* show it (their mean), or None and why
    not: no card in the layout, a patch covered, or patches unlike the printed card
    (:func:`vision.colour.card_seen`). Without it the counter normalises by the white patch alone."""
    printed = {p.name: p.srgb for p in finder.calib.layout.mount().patches}
    if not printed:
        return None, "the layout gives this camera no colour card"
    seen = [finder.card_colours(p) for p in pictures]
    if any(s is None for s in seen):
        return None, "the colour card is not seen whole in every calibration picture"
    mean = {n: np.mean([s[n] for s in seen if s is not None], 0) for n in ["white", *printed]}
    why = card_seen(mean, printed)
    if why:
        return None, f"the colour card does not look like its print: {why}"
    greys = tuple(sorted((n for n, c in printed.items() if len(set(c)) == 1), key=lambda n: printed[n][0]))
    return CardReference(_bgr(float(c) for c in mean["white"]),
                         {n: _bgr(float(c) for c in mean[n]) for n in printed}, greys), "colour card seen"


class _Lazy:
    """Colour features of a crop, computed only for the pixels asked for."""

    def __init__(self, crop: np.ndarray, white: np.ndarray) -> None:
        self.crop, self.white = crop, white

    def __getitem__(self, index: Any) -> np.ndarray:
        return features(self.crop[index], self.white)


def _nearest_chroma(px: np.ndarray, models: Sequence[ColourModel]) -> np.ndarray:
    """Each pixel's (N x 3 features) chroma distance to the nearest of *models*, in spreads."""
    return np.min([m.chroma_distance(px) for m in models], axis=0)


def _standing(not_felt: np.ndarray, areas: np.ndarray) -> np.ndarray:
    """Not-felt pixels on a column's run that goes on down out of the card *areas*: something
    standing on the felt in front (a stack beside, an arm), never a card lying in its area. A
    run goes on over gaps of up to 4 rows (a chip's white spots look like glare on the felt)."""
    run = cv2.morphologyEx(not_felt.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 1), np.uint8)).astype(bool)
    rows = np.arange(run.shape[0])[:, None]
    starts = run & ~np.vstack([np.zeros((1, run.shape[1]), bool), run[:-1]])
    ids = np.where(run, np.cumsum(starts.ravel(order="F")).reshape(run.shape, order="F"), 0)
    lowest_out = np.full(int(ids.max()) + 1, -1)  # per run: its lowest row out of the areas
    out_of_areas = run & ~areas
    np.maximum.at(lowest_out, ids[out_of_areas], np.broadcast_to(rows, run.shape)[out_of_areas])
    return run & (rows <= lowest_out[ids]) & (ids > 0)


def _beside(card_px: np.ndarray, at: tuple[int, int], shape: tuple[int, ...]) -> tuple[int, int, np.ndarray] | None:
    """The card pixels beside a stack's blob (at *at*, *shape* rows x columns), in a window a blob's
    width to either side and down to its base: (first column, last column, mask), or None when
    fewer than 20 (the stack's own columns, 3 px wider, are never the card's)."""
    x, y = at
    height, width = shape
    lo, hi = max(x - 3, 0), min(x + width + 3, card_px.shape[1])
    w0, w1 = max(x - width, 0), min(x + 2 * width, card_px.shape[1])
    near = card_px[:y + height, w0:w1].copy()
    near[:, lo - w0:hi - w0] = False
    return (w0, w1, near) if near.sum() >= 20 else None


def _over(blob: np.ndarray, at: tuple[int, int], roi: ZoneRoi) -> int:
    """How many of a blob's pixels (its box at *at* in *roi*) lie over the zone itself."""
    return int((blob & roi.mask[at[1]:at[1] + blob.shape[0], at[0]:at[0] + blob.shape[1]]).sum())


def _unread(specks: list[tuple[float, float, float, float]]) -> tuple[float, float] | None:
    """Where *specks* (centre x, y, area, chip width in px; each too small to measure) gather more
    than ``SPECKS`` chip footprints within ``SPECKS_REACH`` chip widths of one of them, or None.

    A green 200 on green felt where a spot lights the table unevenly is taken for lit felt but for
    a few pieces (a held-out take counted 2500 for 2900, held stable): the zone is uncertain.
    """
    if not specks:
        return None
    at = np.array(specks, np.float64)
    near = np.hypot(at[:, None, 0] - at[None, :, 0], at[:, None, 1] - at[None, :, 1]) <= SPECKS_REACH * at[:, 3, None]
    total = near @ at[:, 2]
    k = int(np.argmax(total / at[:, 3] ** 2))
    return (float(at[k, 0]), float(at[k, 1])) if total[k] >= SPECKS * at[k, 3] ** 2 else None


def _components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """8-connected blobs of a uint8 mask with their stats. Labels are 16-bit (2.5 times faster here):
    after a 3x3 opening a blob has at least 9 pixels, so a mask under 589,815 pixels cannot overflow."""
    ltype = cv2.CV_16U if mask.size < 65535 * 9 else cv2.CV_32S
    return cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, ltype, cv2.CCL_DEFAULT)


def _bgr(channels: Iterable[float]) -> tuple[float, float, float]:
    """A colour's three channels as a triple."""
    b, g, r = channels
    return b, g, r


def _half(crop: np.ndarray) -> np.ndarray:
    """*crop* at half scale, each pixel the mean of the 2 x 2 it covers (odd sizes rounded up)."""
    return cv2.resize(crop, ((crop.shape[1] + 1) // 2, (crop.shape[0] + 1) // 2), interpolation=cv2.INTER_AREA)


def _half_mask(mask: np.ndarray) -> np.ndarray:
    """A boolean *mask* at :func:`_half`'s scale (every other row and column)."""
    return mask[::2, ::2]


def _half_grey(frame: np.ndarray) -> np.ndarray:
    return cv2.resize(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
