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

Its parts: ``vision.light`` (the frame's light, the felt test), ``vision.projection`` (where a stack
lies in the picture), ``vision.stack`` (one stack measured), ``vision.sides`` (a stack's chips read on
its side), ``vision.hiding`` (a chip wholly hidden behind stacks), ``vision.results`` (what a frame
shows).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import cv2
import numpy as np

from calibration.chips import ChipModels, ColourModel, features, robust_spread, side_features
from calibration.geometry import TableCalibration, Zone, out_of_view
from firmware_host.vision import hiding
from firmware_host.vision.arrays import bgr, components, every
from firmware_host.vision.light import FELT_GLARE, FELT_SHADE, LIGHT_APART, TableLight, colour_card
from firmware_host.vision.projection import StackProjection, ZoneRoi
from firmware_host.vision.results import (
    MIN_CONFIDENCE,
    CardSeen,
    FrameResult,
    StackSeen,
    ZoneCount,
    ZoneStatus,
)
from firmware_host.vision.sides import SideReader
from firmware_host.vision.stack import BEYOND_FOOTPRINTS, Picture, StackBlob, StackReader, ZonePicture
from firmware_host.vision.witness import Witness

__all__ = ["ChipCounter", "learn_chips", "out_of_picture"]

MOTION_LEVEL, MOTION_SHARE = 30, 0.01  # motion: over 1 % of a zone's pixels changed by over 30 grey levels
FOOT_SHARE = 0.25  # chip widths of columns a blob beside the zone ends on the zone in: something stands there
FOOT_RISE, GLARE_FOOT = 0.2, 0.7  # unless its pixels there (this many chip widths up) are mostly the felt under a
# glare brighter than any lamp's on it (``FELT_GLARE``): the edge of a glare (warm dim light, 2026-11-28)
EDGE_MM = 6.0  # a stack's centre this close to its zone's edge (either side) cannot be given to a zone
BASE_REFINED = 5.0  # mm: the most the base's refinement moves it from the rough base (measured: 1.4 over 9,180)
VISIBLE_SHARE = 0.8  # a denomination whose chips calibration finds less often than this share of the best-found
# one's looks like the felt (kept as hidden); one found as often stands out of it whatever its model's distance
TWO_BASES = (1.75, 2.3)  # chip widths a blob's base spans when two stacks touch side by side
LIGHT_ASIDE = 1.25  # ... this many times: a stack there whose top face reads under WEAK_COLOUR is not counted
WEAK_COLOUR = 0.75  # (the colour's distance from its model is the light's, not the chip's)
BASE_MOVED = 1.0  # chip widths a stack's base may move from its blob's lowest point as its edges are measured
THIN = 0.25  # chip widths: a blob over a zone that touches its edge is cut where thinner (a printed line)
PRINT_MATCH = 0.08  # share of the white patch (per channel) the felt's print may stray from the empty table's
PRINT_PART = 0.05  # chip footprints: the least part of the print kept (a marker's or a patch's corners are less)
PRINT_CLEAN = 3  # chips of a denomination off the print that chip calibration learns its side and edge from
THIN_CUT = 0.05  # chip footprints (width squared) of the zone the cut may take away: more is an arm's
SPECKS = 0.05  # chip footprints of specks (each too small to measure) within SPECKS_REACH chip widths of one
SPECKS_REACH = 0.75  # another: something on the felt that cannot be read (a chip the felt test half misses)
UNSEEN_LEVEL = 0.08  # a pixel this far (sum of channels, share of the felt's) from the empty table's picture changed
UNSEEN_BLUR = 3  # px at half scale: the change averaged over this square, signed (the noise cancels, a side's stays)
UNSEEN_MARGIN = 3  # px at half scale around each stack's outline its own (blurred edges, a chip off its axis)
UNSEEN = 0.12  # chip footprints of one changed patch beyond the stacks' outlines: something there the felt test
# missed, when a denomination looks like the felt (``ChipModels.hidden``) or the felt is neutral: the zone is uncertain


class _Piece(NamedTuple):
    """A blob of a zone's not-felt pixels to read: label *i* of *labels*, its stats (x, y, width, height, area:
    its box in the zone's crop), what the card areas may hold of it (*split*: a stack cut off a card lying
    behind it), whether it is one of two stacks side by side cut apart (*halved*) or cut from what thin
    prints joined it to (*thinned*)."""

    labels: np.ndarray
    i: int
    stats: np.ndarray
    split: np.ndarray | None = None
    halved: bool = False
    thinned: bool = False


@dataclasses.dataclass
class _Scan:
    """A chip zone as it is read in one frame: its ROI, *crop* (BGR) and colour features *f*, its not-felt
    pixels (*fg*, opened; *fg_raw*, as the felt test left them), the white patch's colour, chip calibration's
    list of pixels, where cards lie (*cut*: the card areas seen holding a card), its blobs (*labels*) and
    each one's chip width at its bottom's middle (*widths*, px); then, as they are found, what stands and
    what lies on the card areas, the picture its stacks are measured in, its stacks, and its specks (each
    too small to measure: its centre in the crop, area and chip width, px)."""

    roi: ZoneRoi
    crop: np.ndarray
    f: _Lazy
    fg: np.ndarray
    fg_raw: np.ndarray
    white: np.ndarray
    collect: list[np.ndarray] | None
    cut: np.ndarray | None
    labels: np.ndarray
    widths: np.ndarray
    standing: np.ndarray | None = None
    card_px: np.ndarray | None = None
    off_cards: list[np.ndarray] = dataclasses.field(default_factory=list)  # blobs cut by card areas: what is off them
    picture: ZonePicture | None = None
    stacks: list[StackSeen] = dataclasses.field(default_factory=list)
    specks: list[tuple[float, float, float, float]] = dataclasses.field(default_factory=list)  # (x, y, area, width)


class _Occluded(Exception):
    """An arm or a hand over the zone: nothing in it is read."""


class ChipCounter:
    """Counts the chips of every zone of one calibrated table (precomputes each zone's ROI)."""

    def __init__(self, calib: TableCalibration, models: ChipModels) -> None:
        self.calib, self.models = calib, models
        self.sides = SideReader(models, calib.blur_px)  # a stack's chips read one by one on its side
        self.geo = StackProjection(calib)  # where stacks lie in the picture
        self.stacks = StackReader(calib, models, self.geo, self.sides)  # one stack measured
        self.cam = calib.camera
        lay = calib.layout
        self.r, self.t = self.geo.r, self.geo.t  # a chip's radius and thickness (mm)
        w, h = calib.image_size
        self.rois: list[ZoneRoi] = []
        for zone in lay.zones:
            poly = np.array(zone.polygon)
            pts = self._standing(zone)
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
        # chip zones the picture does not hold whole (a stack standing there is not seen, or seen cut): never
        # counted with confidence (``view``); calibrate table warns of them
        chip_zones = {r.zone.name for r in self.rois if r.zone.kind != "cards"}
        self.cut = {z: px for z, px in out_of_view(calib, EDGE_MM).items() if z in chip_zones}
        self.light = TableLight(calib, models, self.rois)  # the frame's light against the calibration's
        self._last_grey: tuple[np.ndarray, np.ndarray] | None = None  # the last frame counted, its half grey
        self._prints = self._learn_prints(calib.empty) if calib.empty is not None else {}
        # the empty table's picture and its white patch: a second view's reference (:meth:`witness`)
        self._empty_white = (None if calib.empty is None or calib.empty.shape[1::-1] != tuple(calib.image_size)
                             else (calib.empty, self.light.white(calib.empty)))
        # the zones are checked against the empty table (``_unseen``) where a denomination looks like the felt,
        # and on a neutral felt, where a grey chip differs from it by its level alone, which the light sets
        # place by place: calibration's chips cannot vouch for every place
        self._empty = self._empty_crops(calib.empty) if models.hidden or self.light.felt.neutral else {}
        self._printed: np.ndarray | None = None  # the print's pixels in the whole picture
        for roi in self.rois:
            if roi.zone.name in self._prints:
                (rows, cols), _ = self._prints[roi.zone.name]
                if self._printed is None:
                    self._printed = np.zeros(calib.image_size[::-1], bool)
                self._printed[rows + roi.y0, cols + roi.x0] = True

    def _standing(self, zone: Zone) -> np.ndarray:
        """Where a stack standing on *zone* may show: the picture's pixels of the zone's corners on the felt
        and at the tallest stack's height (a card area's on the felt alone: cards lie flat)."""
        poly = np.array(zone.polygon)
        height = self.calib.layout.max_stack * self.t if zone.kind != "cards" else 0.0
        top = np.hstack([poly, np.full((len(poly), 1), height)])
        return np.vstack([self.cam.project(poly), self.cam.project(top)])

    def _learn_prints(self, empty: np.ndarray) -> dict[str, tuple[tuple[np.ndarray, np.ndarray], np.ndarray]]:
        """Per chip zone, the felt's print seen in the empty table's picture: its thin not-felt pixels
        (a printed line, a logo's strokes: thinner than ``THIN`` chip widths; a marker, or a chip left on
        the table, is not thin) and their light-normalised colour, as (rows, columns), colours."""
        if empty.shape[1::-1] != tuple(self.calib.image_size):
            return {}
        white = np.maximum(self.light.white(empty).astype(np.float32), 1.0)
        out = {}
        for roi in self.rois:
            if roi.zone.kind == "cards":
                continue
            smooth = cv2.blur(empty[roi.y0:roi.y1, roi.x0:roi.x1], (3, 3))
            off = self.light.not_felt(smooth, white, roi.zone.name).astype(np.uint8)
            width = self.calib.chip_diameter_px(*np.array(roi.zone.polygon).mean(0))
            thin = int(THIN * width) | 1
            opened = cv2.morphologyEx(off, cv2.MORPH_OPEN, np.ones((thin, thin), np.uint8))
            _, labels, stats, _ = components(((off > 0) & (opened == 0)).astype(np.uint8))
            big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] >= PRINT_PART * width * width)
            printed = np.isin(labels, big[big > 0]).astype(np.uint8)
            rows, cols = np.nonzero(cv2.dilate(printed, np.ones((3, 3), np.uint8)))  # and its blurred edges
            if len(rows):
                out[roi.zone.name] = ((rows, cols), smooth[rows, cols].astype(np.float32) / white)
        return out

    def _empty_crops(self, empty: np.ndarray | None) -> dict[str, tuple[np.ndarray, float, np.ndarray]]:
        """Per chip zone, the empty table's picture there (at half scale, float), its median level (sum of
        channels) and where a stack standing on the zone may show (half scale: the zone on the felt and at
        the tallest stack's height): what a zone is compared with when a denomination looks like the felt,
        or on a neutral felt (:meth:`_unseen`)."""
        if empty is None or empty.shape[1::-1] != tuple(self.calib.image_size):
            hidden = ", ".join(str(v) for v, _, _ in self.models.hidden)
            why = (f"chips {hidden} look like the felt" if hidden else
                   "the felt is as grey as the white patch (a grey chip differs from it by its level alone)")
            raise ValueError(f"camera {self.calib.layout.camera}: {why}, and the table calibration holds no "
                             "picture of the empty table to check the zones against: run calibrate table again "
                             "on an empty table")
        out = {}
        for r in self.rois:
            if r.zone.kind != "cards":
                crop = _half(empty[r.y0:r.y1, r.x0:r.x1]).astype(np.float32)
                pts = self._standing(r.zone) - (r.x0, r.y0)
                reach = np.zeros(crop.shape[:2], np.uint8)
                cv2.fillConvexPoly(reach, cv2.convexHull(np.round(pts / 2).astype(np.int32)), 1)
                out[r.zone.name] = (crop, max(float(np.median(crop[_half_mask(r.mask)].sum(1))), 1.0),
                                    reach.astype(bool))
        return out

    def _unseen(self, roi: ZoneRoi, crop: np.ndarray, stacks: Sequence[StackSeen],
                cut: np.ndarray | None) -> tuple[float, float] | None:
        """Where (px in *crop*) the zone differs from the empty table's picture beyond the outlines of
        its *stacks* (and the card areas *cut* that hold a card) over ``UNSEEN`` chip footprints in one
        patch, or None; at half scale. The empty picture is scaled per channel by the zone's median ratio
        to it (the light's level). A shadow there counts too: something the felt test missed could lie in it.
        A patch counts whole, as far as a stack standing on the zone may show, when part of it lies on the
        zone: a stack near the zone's far edge rises over the felt beyond it in the picture. The change is
        averaged over ``UNSEEN_BLUR`` pixels square, signed, before it is measured: a grey side on a grey felt
        differs from it by a little everywhere, by the threshold only in specks."""
        (empty, level, reach), mask = self._empty[roi.zone.name], _half_mask(roi.mask)
        now = _half(crop)
        some = mask[::2, ::2]  # the light's level from every fourth row and column
        gain = np.median(now[::2, ::2][some] / np.maximum(empty[::2, ::2][some], 1.0), axis=0)
        diff = cv2.blur(now.astype(np.float32) - empty * gain.astype(np.float32), (UNSEEN_BLUR, UNSEEN_BLUR))
        over = (cv2.transform(np.abs(diff), np.ones((1, 3), np.float32)) > UNSEEN_LEVEL * level).astype(np.uint8)
        changed = cv2.morphologyEx(over, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        outline = np.zeros_like(changed)
        for s in stacks:
            rings = np.vstack([self.geo.ring(s.x, s.y, 0.0), self.geo.ring(s.x, s.y, max(s.count, 1) * self.t)])
            cv2.fillConvexPoly(outline, cv2.convexHull(np.round((rings - (roi.x0, roi.y0)) / 2).astype(np.int32)), 1)
        outline = cv2.dilate(outline, np.ones((UNSEEN_MARGIN, UNSEEN_MARGIN), np.uint8))
        left = changed.astype(bool) & ~outline.astype(bool) & reach
        if cut is not None:
            left &= ~_half_mask(cut)
        n, labels, stats, centres = components(left.astype(np.uint8))
        on_zone = np.zeros(n, bool)
        on_zone[labels[mask]] = True  # the patches with a part on the zone
        on_zone[0] = False
        if not on_zone.any():
            return None
        k = int(np.argmax(np.where(on_zone, stats[:, cv2.CC_STAT_AREA], -1)))
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
        return _over(blob, at, roi) <= 0.2 * width * width or self.stacks.beyond_outline(
            *self.stacks.beyond(blob, at, (roi.x0, roi.y0), x, y, self.calib.layout.max_stack)) <= BEYOND_FOOTPRINTS

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
    def side_colour(self, frame: np.ndarray, stack: StackSeen) -> np.ndarray | None:
        """The side colour (3 features) of a single chip *stack* found in *frame*: what chip
        calibration learns each denomination's side from."""
        side = self.sides.side_bgr(frame, (0, 0), *self.geo.rims(stack.x, stack.y, 1))
        return None if side is None else side_features(side, self.light.white(frame))[0]

    def inlay_contrast(self, frame: np.ndarray, stack: StackSeen, chips: int = 1) -> float:
        """How much brighter the top face's centre (its inlay) is than the face around it, were
        *stack* (found in *frame*) *chips* high: light-normalised, sum of channels; NaN when out
        of the picture. Chip calibration learns it per denomination from single chips."""
        centre, face = self.stacks.inlay(Picture(frame, (0, 0), self.light.white(frame)), stack.x, stack.y, [chips])
        return float(centre[0] - face[0])


    # -- counting ----------------------------------------------------------------------------
    def witness(self, frame: np.ndarray) -> Witness | None:
        """This camera's *frame* as a second view for another camera's count of the same moment
        (``count(witnesses=...)``); None when it cannot be one: its calibration holds no picture of the empty
        table, or its white patch is not seen whole in *frame*."""
        if self._empty_white is None or frame.shape != self._empty_white[0].shape or not self.light.reference_ok(frame):
            return None
        return Witness(self.geo, self.light, self._empty_white, frame)

    def count(self, frame: np.ndarray, previous: np.ndarray | None = None, *,
              collect: list[np.ndarray] | None = None, witnesses: Sequence[Witness] = ()) -> FrameResult:
        """What every zone holds in *frame*; *previous* (the frame before) detects motion; *witnesses*: other
        cameras' pictures of the same moment (:meth:`witness`), asked where a chip could hide behind a stack.

        *collect*, for chip calibration: each stack's own pixels (light-normalised BGR, N x 3)
        are appended to it as the stack is read.
        """
        if frame.shape[1::-1] != tuple(self.calib.image_size):
            raise ValueError(f"frame is {frame.shape[1]}x{frame.shape[0]}, the calibration "
                             f"{self.calib.image_size[0]}x{self.calib.image_size[1]}")
        white = self.light.white(frame)
        seen = self.light.reference_ok(frame)
        if not seen and previous is not None and self.light.reference_ok(previous):
            white = self.light.white(previous)  # an arm passing over the patch: the light of a frame ago
        if (not seen and (previous is None or not self.light.reference_ok(previous))
                or self.light.card is not None and self.light.correction(frame, previous) is None):
            # the white patch or the colour card covered (or dark) for more than a frame: nothing is read
            zones = {r.zone.name: ZoneCount(r.zone.name, ZoneStatus.OCCLUDED, 0, (), (), 0.0, True)
                     for r in self.rois if r.zone.kind != "cards"}
            cards = {r.zone.name: CardSeen(r.zone.name, False, False, True)
                     for r in self.rois if r.zone.kind == "cards"}
            self._last_grey = (frame, _half_grey(frame))
            return FrameResult(zones, cards, bgr(float(c) for c in white))
        raw_white, relit, correction = white, None, self.light.correction(frame, previous)
        if correction is not None and correction.uneven():  # a spot across the card: the white patch alone
            correction = None
        if correction is not None and self.light.card is not None:
            relit = correction.relit()
            if relit is None:
                white = correction.white(self.light.card)  # the crops are in the calibration's light
        zones, cards = {}, {}
        change = self._change(frame, previous)
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
            fg = self.light.not_felt(smooth, white_here, roi.zone.name)
            if roi.zone.kind != "cards":
                fg = self._unprinted(roi.zone.name, fg, smooth, white_here)
            f = _Lazy(smooth, white_here)
            if roi.zone.kind == "cards":
                cards[roi.zone.name] = self._card(roi.mask[::2, ::2], roi.zone.name, f, fg, motion)
            else:
                present = frozenset(name for name, seen in cards.items() if seen.present)
                zones[roi.zone.name] = self._zone(roi, crop, f, fg, motion, white, present, collect)
        hiding.behind(self.geo, self.rois, zones, self.calib.layout.max_stack, witnesses)
        if relit is None:
            self._lit_otherwise(frame, zones)
        for name in self.cut:  # part of the zone out of the picture
            if zones[name].status != ZoneStatus.OCCLUDED:
                zones[name] = dataclasses.replace(zones[name], status=ZoneStatus.UNCERTAIN, confidence=0.0,
                                                  why=zones[name].why + ("view",))
        return FrameResult(zones, cards, bgr(float(c) for c in raw_white), relit)

    def _change(self, frame: np.ndarray, previous: np.ndarray | None) -> np.ndarray | None:
        """Where *frame* differs from *previous* by over ``MOTION_LEVEL`` grey levels (0 or 1, at half scale,
        once for the whole frame; None without a previous frame). The last frame's grey is kept: a frame is
        converted once, as itself and as the next one's *previous*."""
        grey = _half_grey(frame)
        change = None
        if previous is not None:
            last = self._last_grey
            before = last[1] if last is not None and last[0] is previous else _half_grey(previous)
            change = (cv2.absdiff(grey, before) > MOTION_LEVEL).view(np.uint8)
        self._last_grey = (frame, grey)
        return change

    def _lit_otherwise(self, frame: np.ndarray, zones: dict[str, ZoneCount]) -> None:
        """The chip *zones* lit otherwise than at calibration (``TableLight.moved``) made uncertain
        (``light``): beyond ``LIGHT_APART`` (a spot read as an arm too: not held as one), or beyond
        ``LIGHT_ASIDE`` with a top face read weakly (``WEAK_COLOUR``)."""
        for name, moved in self.light.moved(frame).items():
            far = abs(math.log(moved))
            if far > math.log(LIGHT_APART) or far > math.log(LIGHT_ASIDE) and any(
                    s.colour_confidence < WEAK_COLOUR for s in zones[name].stacks):
                zones[name] = dataclasses.replace(zones[name], status=ZoneStatus.UNCERTAIN, confidence=0.0,
                                                  why=zones[name].why + ("light",))

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
        """What a chip zone holds (*roi*, its *crop* of the frame, colour features *f*, not-felt pixels *fg*),
        the card areas holding a card (*cards_present*) cut from it: each blob of not-felt pixels read in
        turn (:meth:`_piece`), pieces cut off it read in their turn."""
        name = roi.zone.name
        cut = None  # where cards lie in this ROI (card areas seen holding a card)
        for area, pixels in roi.cards.items():
            if area in cards_present:
                cut = pixels if cut is None else cut | pixels
        opened = cv2.morphologyEx(fg.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        n, labels, stats, _ = components(opened)
        widths = self.calib.chip_diameters_px(self.geo.rough_bases(  # each blob's chip width at its bottom's middle
            np.column_stack([roi.x0 + stats[1:, 0] + stats[1:, 2] / 2, roi.y0 + stats[1:, 1] + stats[1:, 3]])))
        scan = _Scan(roi, crop, f, opened, fg, white, collect, cut, labels, widths)
        work = [_Piece(labels, i, stats[i]) for i in range(1, n)]
        try:
            while work:
                work += self._piece(scan, work.pop())
        except _Occluded:
            return ZoneCount(name, ZoneStatus.OCCLUDED, 0, (), (), 0.0, motion)
        stacks = scan.stacks
        footless = self._footless(scan, n, stats, widths)
        if footless is not None:  # something stands on the zone that no stack read explains
            stacks.append(StackSeen(*footless, None, 0, 0.2, why="outline"))
        unread = _unread(scan.specks)
        if unread is not None:  # specks together as large as a chip's part: a chip seen only in pieces
            stacks.append(StackSeen(*self.geo.base(roi.x0 + unread[0], roi.y0 + unread[1]), None, 0, 0.2, why="specks"))
        worst = min([1.0] + [s.confidence for s in stacks])
        beside = self._unexplained(scan) if scan.off_cards and worst >= MIN_CONFIDENCE else None
        if beside is not None:  # a stack behind one read, merged with it and a card in the picture
            worst = min(worst, 0.2)
            stacks.append(StackSeen(*beside, None, 0, 0.2, why="outline"))
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

    def _footless(self, scan: _Scan, n: int, stats: np.ndarray, widths: np.ndarray) -> tuple[float, float] | None:
        """Where (table mm) a blob of the zone's not-felt pixels (*n* of them, with their *stats* and chip
        *widths*), larger than a stack's footprint and a half, ends on the zone itself going down over
        ``FOOT_SHARE`` of a chip's width of columns with no stack read in those columns: something stands on
        the zone, dropped unread (a tall stack at the zone's far edge merged in the picture with the rail
        behind it, taken for something beside the zone; or cut by a card area); or None. Something lying flat
        beside the zone never ends on it."""
        roi = scan.roi
        big = np.flatnonzero(stats[1:n, cv2.CC_STAT_AREA] > 1.5 * widths[:n - 1] ** 2) + 1
        for i in big:  # (smaller ones are read as a stack or two, or are specks, or another zone's)
            x, y, bw, bh, _ = stats[i]
            width = float(widths[i - 1])
            blob = scan.labels[y:y + bh, x:x + bw] == i
            cols, lowest = _foot(blob, (x, y), roi)
            if len(cols) < FOOT_SHARE * width:
                continue
            centre = float(x + cols.mean())
            if not any(abs(self.geo.base_pixel((s.x, s.y))[0] - roi.x0 - centre) <= width for s in scan.stacks
                       ) and not self._glare_foot(scan, blob, (x, y), (cols, lowest), width):
                return self.geo.base(roi.x0 + centre, roi.y0 + y + bh - 0.5)
        return None

    def _glare_foot(self, scan: _Scan, blob: np.ndarray, at: tuple[int, int], foot: tuple[np.ndarray, np.ndarray],
                    width: float) -> bool:
        """Whether the pixels a blob (its box at *at* in the ROI) ends on the zone with (its *foot*, as
        :func:`_foot` gives it, and those up to ``FOOT_RISE`` chip widths over them) are mostly (``GLARE_FOOT``)
        the felt under more white than any lamp gives it (``FELT_GLARE``): the edge of a glare, not a stack's
        base."""
        cols, lowest = foot
        rise = max(int(round(FOOT_RISE * width)), 1)
        rows = (lowest[None, :] - np.arange(rise)[:, None]).clip(0)
        columns = np.broadcast_to(cols[None, :], rows.shape)
        inside = blob[rows, columns]
        pixels = scan.crop[rows[inside] + at[1], columns[inside] + at[0]].astype(np.float32)
        scale = 1.0 / np.maximum(scan.white.astype(np.float32), 1.0)
        test = self.light.felt
        level, glare, residual = ((pixels * scale) @ test.split.T).T
        lamp = (np.abs(residual) <= test.bound * np.maximum(level, 1.0)) & (level >= FELT_SHADE) & (glare > FELT_GLARE)
        return bool(len(pixels)) and float(lamp.mean()) >= GLARE_FOOT

    def _piece(self, scan: _Scan, piece: _Piece) -> list[_Piece]:
        """One blob of a zone read: a speck kept for later, a stack measured or said uncertain (in *scan*),
        or the pieces it is cut into to be read in turn (off the card areas, where thin prints join it to
        something, two stacks side by side). Raises :class:`_Occluded` for an arm or a hand over the zone."""
        roi = scan.roi
        labels, i, (x, y, bw, bh, area), split, halved, thinned = piece
        whole = split is None and not (halved or thinned)  # as the felt test left it, not a piece cut off
        if area < 12 and not whole:
            return []  # a sliver cut off a blob
        u = roi.x0 + x + bw / 2
        width = (float(scan.widths[i - 1]) if labels is scan.labels
                 else self.calib.chip_diameter_px(*self.geo.rough_base(u, roi.y0 + y + bh)))
        if area < 12 or area < 0.1 * width * width:  # a speck: too small to measure
            if whole and roi.mask[y + bh // 2, x + bw // 2]:
                scan.specks.append((x + bw / 2, y + bh / 2, float(area), width))
            return []
        blob = labels[y:y + bh, x:x + bw] == i
        low = blob[max(bh - int(0.4 * width), 0):]  # the base's near half
        base_cols = np.flatnonzero(low.any(0)) if low.any() else np.arange(bw)
        if split is None and scan.cut is not None:  # a card lying behind, merged with the stack in the picture?
            pieces = self._off_cards(scan, piece, blob, (low, base_cols), width)
            if pieces is not None:
                return pieces
        h, w = scan.fg.shape
        touches = x == 0 or y == 0 or x + bw == w or y + bh == h
        max_area = width * (width + self.calib.layout.max_stack * 1.6)
        if area > 1.6 * max_area or (touches and area > 1.5 * width * width):
            if _over(blob, (x, y), roi) <= 0.2 * width * width:
                return []  # a card or an arm beside the zone (unless it ends on the zone: ``_footless``)
            return self._thinned(scan, piece, width)
        u = roi.x0 + x + float(np.nonzero(low)[1].mean()) if low.any() else u
        rough = self.geo.rough_base(u, roi.y0 + y + bh - 0.5)
        if roi.zone.inside(*rough) < -EDGE_MM - BASE_REFINED and _over(blob, (x, y), roi) <= 0.2 * width * width:
            return []  # another zone's, already from its rough base (the refined one is within BASE_REFINED)
        if _cut(blob, (roi.x0 + x, roi.y0 + y), self.calib.image_size) and _over(blob, (x, y), roi):
            scan.stacks.append(StackSeen(float(rough[0]), float(rough[1]), None, 0, 0.2, why="view"))
            return []  # cut by the picture's edge: not measured
        cx, cy = self.geo.base(u, roi.y0 + y + bh - 0.5, rough)
        inside = roi.zone.inside(cx, cy)
        if inside < -EDGE_MM and self._elsewhere(blob, (x, y), roi, cx, cy, width):
            return []  # another zone's
        base_w = base_cols[-1] - base_cols[0] + 1
        if inside < EDGE_MM:  # on the zone's edge, or over the zone from beyond it (a stack joined to a printed
            # line, whose lowest point is then the line's): whose chips these are is the dealer's call
            scan.stacks.append(StackSeen(cx, cy, None, 0, 0.2, why="edge"))
            return []
        if TWO_BASES[0] * width <= base_w <= TWO_BASES[1] * width and not halved:
            # two stacks touching side by side: each measured on its half of the blob (cut between bases)
            part = np.zeros_like(scan.fg)
            part[y:y + bh, x:x + bw] = blob
            part[:, x + (base_cols[0] + base_cols[-1]) // 2] = 0
            m, sub, sub_stats, _ = components(part)
            return [_Piece(sub, k, sub_stats[k], split, True, thinned) for k in range(1, m)]
        if not 0.6 * width <= base_w <= 1.5 * width:  # not one stack's width
            if thinned:  # cut from an arm, not from a printed line: the arm is over the zone
                raise _Occluded
            scan.stacks.append(StackSeen(cx, cy, None, 0, 0.2, why="blob"))  # touching stacks, a card, a finger
            return []
        scan.stacks.append(self._measured(scan, piece, blob, (cx, cy)))
        return []

    def _off_cards(self, scan: _Scan, piece: _Piece, blob: np.ndarray, base: tuple[np.ndarray, np.ndarray],
                   width: float) -> list[_Piece] | None:
        """A blob spread over card areas holding a card beyond its base's columns (a card lying behind a
        stack, merged with it in the picture): its pieces off the card areas (the stack's visible parts),
        each with what the card areas may hold of it; None when it is not. *base*: the blob's near half
        (rows) and the columns it covers (the base is never on a card)."""
        assert scan.cut is not None  # (cards present)
        labels, i, (x, y, bw, bh, area), split, halved, thinned = piece
        cut, (low, base_cols) = scan.cut, base
        own_low = low & ~cut[y + bh - len(low):y + bh, x:x + bw]
        cols = np.flatnonzero(own_low.any(0)) if own_low.any() else base_cols
        band = np.zeros(bw, bool)
        band[max(cols[0] - 3, 0):cols[-1] + 4] = True
        if (blob & cut[y:y + bh, x:x + bw] & ~band).sum() <= 0.05 * width * width:
            return None
        part = np.zeros_like(scan.fg)  # the blob without the card areas: the stack's visible part
        part[y:y + bh, x:x + bw] = blob & ~cut[y:y + bh, x:x + bw]
        part = cv2.morphologyEx(part, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        scan.off_cards.append(part)
        m, sub, sub_stats, _ = components(part)
        if scan.standing is None or scan.card_px is None:  # when a stack is merged with a card: what stands,
            scan.standing = _standing(scan.fg_raw, cut)  # what lies on the card areas
            scan.card_px = cut & scan.fg_raw & ~scan.standing
        beside = scan.card_px.copy()  # the card areas' not-felt pixels and the whole blob: the stack's
        beside[y:y + bh, x:x + bw] |= blob  # top may be there (beyond a band the card area cut)
        return [_Piece(sub, k, sub_stats[k], beside, halved, thinned) for k in range(1, m)]

    def _unexplained(self, scan: _Scan) -> tuple[float, float] | None:
        """Where (table mm) a blob card areas cut holds, off the card areas, more than the outlines of the
        stacks read in it by ``BEYOND_FOOTPRINTS`` of a chip's footprint: a stack standing behind one read,
        merged with it and with the card in the picture (in the same piece as the stack read, or cut off
        it by the card area, its base hidden); or None. A blob no stack was read in is left as it is."""
        roi, stacks = scan.roi, [s for s in scan.stacks if s.count > 0]
        if not stacks:
            return None
        for part in scan.off_cards:
            left, footprint = part.view(bool), 0.0
            for s in stacks:  # (a chip's footprint where the stacks stand)
                left, footprint = self.stacks.beyond(left, (0, 0), (roi.x0, roi.y0), s.x, s.y, s.count)
            if np.count_nonzero(left) == np.count_nonzero(part):
                continue  # no stack read in it
            n, _, stats, _ = components(cv2.morphologyEx(left.view(np.uint8), cv2.MORPH_OPEN,
                                                         np.ones((3, 3), np.uint8)))
            if n < 2:
                continue
            k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
            x, y, w, h, area = stats[k]
            if area > BEYOND_FOOTPRINTS * footprint:
                at = self.geo.rough_base(roi.x0 + x + w / 2, roi.y0 + y + h - 0.5)
                return float(at[0]), float(at[1])
        return None

    def _thinned(self, scan: _Scan, piece: _Piece, width: float) -> list[_Piece]:
        """A blob too large for a stack over the zone: an arm (:class:`_Occluded`), unless a thin print (a
        line) joins a stack to the table's edge or to an arm beside the zone: then its pieces cut where
        thin, if little of the zone is cut away."""
        labels, i, _, split, halved, thinned = piece
        thin = int(THIN * width) | 1
        whole = labels == i
        part = cv2.morphologyEx(whole.astype(np.uint8), cv2.MORPH_OPEN, np.ones((thin, thin), np.uint8))
        if thinned or (whole & ~part.astype(bool) & scan.roi.mask).sum() > THIN_CUT * width * width:
            raise _Occluded
        m, sub, sub_stats, _ = components(part)
        return [_Piece(sub, k, sub_stats[k], split, halved, True) for k in range(1, m)]

    def _measured(self, scan: _Scan, piece: _Piece, blob: np.ndarray, base: tuple[float, float]) -> StackSeen:
        """A blob of one stack's width measured (:class:`StackReader`) with its base at *base* (mm)."""
        roi, crop, fg_raw = scan.roi, scan.crop, scan.fg_raw
        labels, i, (x, y, bw, bh, _), split, _, _ = piece
        if scan.picture is None:  # the felt's colour here, under this light
            bare = (~fg_raw[::2, ::2]).astype(np.uint8)  # (at half scale)
            felt = np.array((cv2.mean(every(crop, 2), bare) if cv2.countNonZero(bare) > 20
                             else cv2.mean(crop))[:3], np.float32)
            scan.picture = ZonePicture(crop, (roi.x0, roi.y0), scan.white, felt, fg_raw, scan.collect)
        own = np.zeros_like(scan.fg)  # this stack's pixels and 2 px around: not a card or stack beside it
        y0, x0 = max(y - 2, 0), max(x - 2, 0)
        own[y0:y + bh + 2, x0:x + bw + 2] = cv2.dilate((labels[y0:y + bh + 2, x0:x + bw + 2] == i).astype(np.uint8),
                                                      np.ones((5, 5), np.uint8))
        seen = self.stacks.read(scan.picture, StackBlob(blob, (x, y), scan.f[y:y + bh, x:x + bw], base,
                                                        own.astype(bool), split, scan.standing))
        if math.hypot(seen.x - base[0], seen.y - base[1]) > BASE_MOVED * 2 * self.r:  # measured off its blob's base
            return StackSeen(*base, None, 0, 0.2, why="unmeasured")  # (a card behind it taken for its top)
        if seen.confidence < MIN_CONFIDENCE and not seen.why:  # given up before a count
            return dataclasses.replace(seen, why="unmeasured")
        return seen


def felt_model(calib: TableCalibration, frame: np.ndarray, zone: str | None = None) -> ColourModel:
    """The felt's colour model from *frame*'s chip zones (or *zone*), mostly bare felt (robust to a few chips)."""
    counter = ChipCounter(calib, ChipModels({}, ColourModel((0.25, 0.6, 0.25), (1, 1, 1))))
    rois = [r for r in counter.rois if (r.zone.name == zone if zone else r.zone.kind in ("bet", "pot"))]
    if not rois:
        raise ValueError(f"camera {calib.layout.camera} counts no zone {zone!r}" if zone else
                         f"camera {calib.layout.camera} counts no chip zone")
    white = counter.light.white(frame)
    f = np.vstack([features(frame[r.y0:r.y1, r.x0:r.x1], white)[r.mask] for r in rois])
    med = np.median(f, 0)
    spread = np.maximum(robust_spread(f, med), (0.012, 0.012, 0.04))
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
            excess[v] = [s.excess_px for s in mine]
            inlay[v] = float(np.median([counter.inlay_contrast(img, s) for s in mine]))
            sides = [c for c in (counter.side_colour(img, s) for s in mine) if c is not None]
            if sides:
                side[v] = np.array(sides)
    models = learn(samples, felt, excess, directions, inlay, side, visible)
    card, note = colour_card(finder.light, list(shows.values()))
    lit = [counter.light.felt_light(img) for img in shows.values()]  # where the light falls on each zone (the felt's)
    felt_light = {z: float(np.median([m[z] for m in lit if z in m])) for z in sorted(set().union(*lit))}
    return dataclasses.replace(models, card=card, card_note=note, on_print=on_print, felt_light=felt_light,
                               hidden=hidden)


class _Lazy:
    """Colour features of a crop, computed only for the pixels asked for."""

    def __init__(self, crop: np.ndarray, white: np.ndarray) -> None:
        self.crop, self.white = crop, white

    def __getitem__(self, index: Any) -> np.ndarray:
        return features(self.crop[index], self.white)


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


def _foot(blob: np.ndarray, at: tuple[int, int], roi: ZoneRoi) -> tuple[np.ndarray, np.ndarray]:
    """Where a blob (its box at *at* in *roi*) ends over the zone itself going down: its columns whose lowest
    pixel lies on the zone, and those rows (in the blob's box; both empty when none does). Something lying
    flat beside the zone (a card) never ends there; something standing on the zone does."""
    cols = np.flatnonzero(blob.any(0))
    lowest = blob.shape[0] - 1 - np.argmax(blob[::-1, cols], axis=0)
    on = roi.mask[at[1] + lowest, at[0] + cols]
    return cols[on], lowest[on]


def _over(blob: np.ndarray, at: tuple[int, int], roi: ZoneRoi) -> int:
    """How many of a blob's pixels (its box at *at* in *roi*) lie over the zone itself."""
    return int((blob & roi.mask[at[1]:at[1] + blob.shape[0], at[0]:at[0] + blob.shape[1]]).sum())


def out_of_picture(calib: TableCalibration) -> list[str]:
    """What of its layout a camera's picture does not hold whole (:func:`geometry.out_of_view`, for stacks
    ``EDGE_MM`` inside a zone: those nearer its edge are the dealer's call), in words for the installer."""
    kinds = {zone.name: zone.kind for zone in calib.layout.zones}

    def effect(what: str) -> str:
        kind = kinds.get(what)
        return ("its chips are never counted with confidence" if kind in ("bet", "pot")
                else "a card there is not seen whole" if kind == "cards" else "the colour card is not used")
    return [f"{'zone ' + what if what in kinds else what} lies {px:.0f} px out of the picture: {effect(what)}"
            for what, px in out_of_view(calib, EDGE_MM).items()]


def _cut(blob: np.ndarray, at: tuple[int, int], size: tuple[int, int]) -> bool:
    """Whether a blob (its box at *at* in the picture) reaches the edge of the picture of *size* (w, h)."""
    (x, y), (h, w) = at, blob.shape
    return x == 0 or y == 0 or x + w == size[0] or y + h == size[1]


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


def _half(crop: np.ndarray) -> np.ndarray:
    """*crop* at half scale, each pixel the mean of the 2 x 2 it covers (odd sizes rounded up)."""
    return cv2.resize(crop, ((crop.shape[1] + 1) // 2, (crop.shape[0] + 1) // 2), interpolation=cv2.INTER_AREA)


def _half_mask(mask: np.ndarray) -> np.ndarray:
    """A boolean *mask* at :func:`_half`'s scale (every other row and column)."""
    return mask[::2, ::2]


def _half_grey(frame: np.ndarray) -> np.ndarray:
    return cv2.resize(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
