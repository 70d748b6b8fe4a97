"""One stack measured in a chip zone's picture: its denomination from its top face's colour, its count
from the sub-pixel height of its columns against the camera model's for 0..N chips, then the checks
that its outline is one stack's (a stack standing behind it, a card beside it, a chip under its base
the edges missed). Each step that cannot tell gives an uncertain :class:`StackSeen`, never a guess.

:class:`StackReader` is used by ``ChipCounter`` for each blob of one stack's width; docs/vision.md
("Counting") has the rules and the figures that set the constants here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import cv2
import numpy as np

from calibration.chips import ChipModels, ColourModel, features, robust_spread
from calibration.geometry import TableCalibration
from firmware_host.vision.arrays import bgr, components, median
from firmware_host.vision.projection import StackProjection
from firmware_host.vision.results import MIN_CONFIDENCE, StackSeen
from firmware_host.vision.sides import SideReader, sample

__all__ = ["INLAY_CONFIDENCE", "Picture", "StackBlob", "StackReader", "ZonePicture", "count_confidence"]

INNER_TOP, INNER_BOT = (3, 7), (3, 6)  # rows inside an edge whose median is the chip's level there
STACK_OFFSET_MM = 0.5  # how far (per axis) a chip may sit off the one below it in a stack (a random walk up it)
MAX_COLUMN_CORRELATION = 0.8  # the most neighbouring columns' edge errors are taken to go together
CALIBRATION_SIGMA = 0.07  # chips: the least the edge bias leaves uncertain (its single chips' spread when more)
SHORT_CARRY = 0.5  # share of a single chip's short silhouette (a negative edge bias) a stack may not repeat
COLUMN_MARGIN = 0.25  # share of the base's width left out on either side (the rim's steep ends)
OUTLIER_PX = 1.5  # px a column's span may stray from the other columns' before it is left out
KEEP_SHARE = 0.6  # the least share of a stack's columns a count rests on (outliers out, tops against a card)
STRAY_CHIPS = 2.0  # a column further than this off the others' span: the outline is not one stack's
CONFIDENT_SIGMAS = 1.5  # uncertainties between a confident height and the half-way point to the next count
CARD_SEPARATION = 8.0  # spreads of a chip's top face model a card's colour must be from it to tell them apart
CLEAR_ROWS = 2  # rows of felt just over a column's top that show it clear of a card like the chip behind
CLEAR_COLUMNS, CLEAR_SHARE = 3, 0.15  # the fewest such clear columns (number, share of the stack's) to count it
INLAY_SHARE = 0.4  # share of its learnt contrast a top face's centre must show to confirm a count
INLAY_MIN = 0.15  # a learnt inlay contrast under this confirms no count (the centre does not stand out)
INLAY_REACH, INLAY_CONFIDENCE = 0.35, 0.75  # a height this near a count its top face's centre confirms: that count
OUTLINE_BLUR_PX = 2.0  # px a stack's outline is widened by for the blur before its blob is looked at beyond it
BEYOND_FOOTPRINTS = 0.25  # chip footprints of a blob beyond its stack's outline: not one stack (plain: at most 0.09)
BEYOND_OTHER = 0.08  # chip footprints of one patch of another denomination's colour there: a stack behind it showing
# beside it (a sliver: 0.11-0.15; plain stacks at most 0.02-0.05, 0.08 blurred 2 px)
CHROMA_FLOOR = 0.08  # a pixel darker than this (share of the white patch) has no chroma to tell a colour by
FOREIGN_CHIPS = 1.0  # chips of another denomination's side under a stack's top: a stack behind it, not one stack
FOREIGN_SPREADS = 6.0  # a side row this many spreads from the top's colour model is not the top's denomination
OTHER_SPREADS = 4.0  # a side row within this many spreads of another denomination's model is that one's
SIDE_SHADE = 0.6  # the darkest a chip's shaded side is, as a share of its face's level
CARD_SIGMA = 0.4  # chips: the extra uncertainty of a top measured against a card rather than the felt (a card
# back's white border reads half-way from its colour to the chip's: tops 0-0.72 chip high; wholly so, never counted)
UNDER_BASE = 0.7  # chips under a stack's base (in px per chip at its front) where a missed chip's side is
FELT_APART = 0.3  # a pixel this far (share of the felt's norm) from the felt beside it is not felt
BASE_COVERED = 0.25  # share of the columns not felt there: a chip under the base the edges did not see (a green
# 200 on green felt under a pink 2000 showed 0.29 of its white edge spots: 0.3 read it as one 2000)
UNLIKE_DEPTH = 0.25  # chips under a stack's base where a chip the edges missed shows, unlike a blend of the felt
UNLIKE_BLEND = 0.4  # and of the bottom chip's side over this share of the felt's norm (the base's edge is a blend)
UNLIKE_COVERED = 0.5  # share of the middle columns so: a chip of another colour under the base
VOUCHED_BASE = 0.2  # and for a stack vouched for chip by chip (topped by a side look-alike): felt under its base
FACE_STEP = 0.3  # a step this bright (light-normalised sum of channels) from side to face under a lower rim than a
FACE_STEP_SHARE = 0.4  # stack's top, the top rim's under this share of it: the face of a stack behind, seen over it
FACE_ABSENT = -0.3  # a step this far below none under a stack's top rim: no face over it (its silhouette's top is a
# chip's lying touching it behind, seen whole over it: two 500s and one behind read as six; stacks read, at least -0.12)
BARE_BASE = 0.35  # a bottom chip's side flatter than this share of the others' (their texture: edge inserts,
# spots, gloss): no chip's side, the stack's own shadow cast toward the camera (an 11-high stack of 1000s under a
# spot read 12: bottom 0.08-0.25 of the others, stacks read right 0.60 or more)
SIDE_TEXTURE = 0.04  # sides flatter than this (spread over their columns, share of their level) carry no texture
BARE_CHIPS = 3  # the least chips read for the bottom one's side to be compared with the others'

# a card beside a split stack: its pixels (ROI mask), its light-normalised colour, the direction
# from that colour to the chip's top face (card 0, chip 1); see StackReader._card_contrast
_CardContrast = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Picture:
    """Pixels a stack is read in: part of a frame (*crop*, BGR), where it lies in the frame (*origin*,
    its top-left pixel) and the white reference patch's colour in that frame (what light is normalised by)."""

    crop: np.ndarray
    origin: tuple[int, int]
    white: np.ndarray


@dataclass(frozen=True)
class ZonePicture(Picture):
    """A chip zone's region of interest in one frame, as its stacks are measured in it: also the felt's
    colour about them (BGR, under this light), the crop's pixels unlike the felt, and for chip calibration
    the list each stack's own pixels are appended to (light-normalised BGR, N x 3)."""

    felt: np.ndarray
    not_felt: np.ndarray
    collect: list[np.ndarray] | None = None


@dataclass(frozen=True)
class StackBlob:
    """One stack's pixels as the zone's felt test found them: its *mask* in its box, whose top-left is *at*
    in the zone's crop, their colour *features*, the centre of its *base* on the table (mm), *own* (its
    pixels and 2 px around, in the crop: not a card or a stack beside it); when a card area holding a card
    split it, *card_px* (what may be the stack's on the card areas) and *standing* (what stands there)."""

    mask: np.ndarray
    at: tuple[int, int]
    features: np.ndarray
    base: tuple[float, float]
    own: np.ndarray
    card_px: np.ndarray | None = None
    standing: np.ndarray | None = None

    @property
    def split(self) -> bool:
        """Whether a card area holding a card cut the stack's blob (its top may lie on it)."""
        return self.card_px is not None and bool(self.card_px.any())


@dataclass
class _Reading:
    """A stack as it is read: where its base is (mm), what its top face says, what it is measured against."""

    x: float
    y: float
    rise: float  # px per chip at its top
    ellipse: float  # rows a chip's outline spans there
    own: np.ndarray  # its pixels: on a card area too, less a card unlike it
    span_px: int = 0  # its silhouette's rows
    rough: float = 0.0  # mm, from them
    z: float = 0.0  # where its columns look for the top face (two chips under *rough*)
    value: int | None = None
    colour: np.ndarray | None = None  # its top face's colour features
    colour_conf: float = 0.0
    direction: np.ndarray | None = None  # the colour direction its edges are measured in
    card: _CardContrast | None = None  # the card beside its top (a split stack's), told apart from it
    lying: np.ndarray | None = None  # what lies on the card areas (not a stack standing beside it)

    @property
    def ell(self) -> int:
        """Rows of its top face's ellipse that are face."""
        return max(2, int(round(0.9 * self.ellipse)))


class _Columns(NamedTuple):
    """A stack's measured columns (crop), their silhouette heights (px) and bottom rows, whether each top
    is near a card and clear of it (None without a card); see :meth:`StackReader._column_spans`."""

    cols: np.ndarray
    spans: np.ndarray
    bottoms: np.ndarray
    backed: np.ndarray | None
    clear: np.ndarray | None


@dataclass
class _Measured:
    """A stack's columns as measured (:class:`_Columns`), its base's lower outline at them (image rows),
    the columns whose top is against a card and those its count rests on."""

    columns: _Columns
    base_rows: np.ndarray
    against: np.ndarray
    keep: np.ndarray | None = None


class _Height(NamedTuple):
    """A stack's height read from its columns: chips (*est*) and px per chip, the count (*chips*), its uncertainty
    (chips), and which columns it rests on (*keep*; *valid*: those measured against the felt or a card
    unlike the chip), each column's span less the model's at the count (*shape*), the edges' excess (px)."""

    est: float
    per_chip: float
    chips: int
    sigma: float
    keep: np.ndarray
    valid: np.ndarray
    shape: np.ndarray
    excess: float


class _GiveUp(Exception):
    """The stack cannot be measured (its reading gives an uncertain count, confidence 0)."""


class StackReader:
    """Measures stacks in the pictures of one calibrated camera (*calib*, through *geo*) with chip
    calibration's *models*, their chips read on the side by *sides*."""

    def __init__(self, calib: TableCalibration, models: ChipModels, geo: StackProjection, sides: SideReader) -> None:
        self.models, self.geo, self.sides = models, geo, sides
        self.t, self.max_stack = geo.t, calib.layout.max_stack
        self.top_z = self.t * self.max_stack  # mm: the tallest stack's top
        # per denomination, the colour direction its edges are measured in (see chips.edge_direction)
        self.directions = {v: np.array(d, np.float32) for v, d in models.edge_dir.items()}
        # per denomination: the other denominations' models' means and spreads, then its own
        self._models: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for v in models.chips:
            order = [m for u, m in models.chips.items() if u != v] + [models.chips[v]]
            self._models[v] = (np.array([m.mean for m in order], np.float32), np.array([m.spread for m in order],
                                                                                     np.float32))

    # -- one stack -----------------------------------------------------------------------------
    def read(self, zone: ZonePicture, blob: StackBlob) -> StackSeen:
        """*blob* (one stack's width) read in *zone*: its denomination, count and confidence, or why not."""
        ring0, ring1 = self.geo.ring(*blob.base, 0.0), self.geo.ring(*blob.base, self.t)
        r = _Reading(*blob.base, rise=max(float(ring0[:, 1].min() - ring1[:, 1].min()), 0.3),
                     ellipse=float(np.ptp(ring0[:, 1])), own=blob.own)
        self._span(r, blob.mask.shape[0])
        try:
            self._top(zone, blob, r)
            if blob.split:
                self._top_beside_card(zone, blob, r)
            like = blob.split and r.card is None  # a card like the chip (a red back behind a red stack)
            if blob.split:
                r.own = self._own(blob, r.card)
            m = self._measure(zone, blob, r)
            h = self._height(zone, r, m, like)
        except _GiveUp:
            return StackSeen(r.x, r.y, None, 0, 0.0)
        assert r.colour is not None  # (read by _top)
        middle, rims = self.geo.rims(r.x, r.y, h.chips)  # where its side is read and its face's step
        stray, side, layers = self._outline(zone, blob, r, m, h, middle, rims)
        bare = not stray and self._bare_base(zone, middle, rims)  # its base the edges found: its shadow's?
        sigma = max(h.sigma, 1.0) if stray or bare else h.sigma  # not one stack's outline (a card, a stack behind
        # it), or its base maybe its shadow
        count, count_conf, inlay = h.chips, count_confidence(h.est, sigma), None
        if count_conf < MIN_CONFIDENCE and not (stray or bare or layers) and h.est >= 0.5:  # between two counts: the
            # top face's centre (not for a mixed stack: its chips were read at the height measured)
            near = sorted({max(1, int(np.floor(h.est))), max(1, int(np.ceil(h.est)))})
            confirmed = [n for n in near if self.inlay_peaks(zone, r.x, r.y, n, r.value)]
            if len(confirmed) == 1 and abs(h.est - confirmed[0]) <= INLAY_REACH:
                count, count_conf, inlay = confirmed[0], INLAY_CONFIDENCE, confirmed[0]
        why = ("" if min(count_conf, r.colour_conf) >= MIN_CONFIDENCE
               else "colour" if r.value is None or r.colour_conf < MIN_CONFIDENCE
               else "side" if side else "outline" if stray else "height")
        return StackSeen(round(r.x, 1), round(r.y, 1), r.value, count, round(min(count_conf, r.colour_conf), 3),
                         bgr(round(float(c), 4) for c in r.colour), h.excess, round(h.est, 3), round(r.colour_conf, 3),
                         round(sigma, 4), inlay, layers, why)

    def _span(self, r: _Reading, span_px: int) -> None:
        """The stack's rough height (mm) from its silhouette's *span_px* rows, and where its top face is looked for."""
        r.span_px = span_px
        r.rough = (span_px - r.ellipse) / r.rise * self.t  # mm, from the blob's rows
        r.z = float(np.clip(r.rough - 2 * self.t, 0, self.top_z))

    def _top(self, zone: ZonePicture, blob: StackBlob, r: _Reading) -> None:
        """The denomination first, from the top face's colour (its blob's top rows, middle columns): its
        colour sets the direction the edges are measured in. Chip calibration collects the chip's pixels."""
        rows = np.flatnonzero(blob.mask.any(1))
        width = blob.mask.shape[1]
        top = rows[0] if len(rows) else 0
        inner = slice(width // 4, width - width // 4)
        face = blob.features[top:top + r.ell, inner][blob.mask[top:top + r.ell, inner]]
        if len(face) < 3:
            raise _GiveUp
        r.colour = median(face, 0)
        r.value, r.colour_conf = self.models.classify(r.colour) if self.models.chips else (None, 0.0)
        if zone.collect is not None:  # chip calibration: the chip's own pixels
            core = cv2.erode(blob.mask.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
            x, y = blob.at
            pix = zone.crop[y:y + blob.mask.shape[0], x:x + width][core].astype(np.float32)
            zone.collect.append(pix / np.maximum(zone.white.astype(np.float32), 1.0))
        r.direction = self.directions.get(r.value) if r.value is not None else None

    def _top_beside_card(self, zone: ZonePicture, blob: StackBlob, r: _Reading) -> None:
        """A split stack's denomination from its top face, which the card area may have cut off its blob, and
        the card beside it told apart (``r.card``; None: a card like the chip)."""
        assert blob.card_px is not None  # (split)
        r.lying = blob.card_px & ~blob.standing if blob.standing is not None else blob.card_px  # not a stack beside
        again = self._split_colour(zone, blob, r.lying, r.ell)
        read, read_conf = self.models.classify(again) if again is not None and self.models.chips else (None, 0.0)
        if read in self.directions and read_conf >= MIN_CONFIDENCE:
            r.card = self._card_contrast(zone, r.lying, blob, read)
            if r.card is not None:
                assert read is not None and again is not None  # (in directions)
                r.value, r.colour_conf, r.colour, r.direction = read, read_conf, again, self.directions[read]
        if r.card is None:
            r.card = self._card_contrast(zone, r.lying, blob, r.value)

    @staticmethod
    def _own(blob: StackBlob, card: _CardContrast | None) -> np.ndarray:
        """A split stack's pixels on the card area are its own, less a card unlike the chip."""
        assert blob.card_px is not None  # (split)
        (x, y), (height, width) = blob.at, blob.mask.shape
        lo, hi = max(x - 3, 0), x + width + 3
        mine = blob.own.copy()
        mine[:y + height, lo:hi] |= blob.card_px[:y + height, lo:hi]
        return mine & ~card[0] if card is not None else mine

    def _measure(self, zone: ZonePicture, blob: StackBlob, r: _Reading) -> _Measured:
        """The stack's columns measured: its base from the blob's bottom, then from the sub-pixel bottom
        edges where they put it 0.4 px or more off: the same columns against the base moved (measured again
        there until 2026-11-27 evening, which changed no exact count of 158 evaluations and took 5 % more
        time). A split stack is measured twice at least (its height, hence its columns, from the spans) and
        its top face read again where measured: along another denomination's colours, once more."""
        for attempt in range(3):
            measured = self._column_spans(zone, r)
            if measured is None:
                raise _GiveUp
            m = measured
            base_rows = self.geo.boundary(r.x, r.y, 0.0, m.cols + zone.origin[0], upper=False)  # the base's outline
            shift = float((m.bottoms - base_rows + zone.origin[1]).mean())
            if blob.split:  # the split blob's rows miss its part on the card area: from the spans
                self._span(r, max(r.span_px, int(np.ceil(float(median(m.spans))))))
            if r.card is not None:
                again = self._top_colour(zone, m.cols, m.bottoms - m.spans, r.ell)  # the face, not the card
                if again is None:
                    raise _GiveUp
                r.colour = again
                read, r.colour_conf = self.models.classify(again) if self.models.chips else (None, 0.0)
                if read != r.value:  # measured along the wrong denomination's colours: again, or give up
                    if attempt == 2 or read not in self.directions or r.colour_conf < MIN_CONFIDENCE:
                        raise _GiveUp
                    assert read is not None and r.lying is not None  # (in directions; split)
                    r.value, r.direction = read, self.directions[read]
                    r.card = self._card_contrast(zone, r.lying, blob, r.value)
                    if r.card is None:  # this one looks like the card
                        raise _GiveUp
                    r.own = self._own(blob, r.card)
                    continue
            settled = abs(shift) < 0.4 and (attempt == 1 or r.card is None)
            if attempt == 2 or (attempt == 1 and r.card is None) or settled:
                break
            if abs(shift) >= 0.4:
                u0, v0 = self.geo.base_pixel((r.x, r.y))
                r.x, r.y = self.geo.base(u0, v0 + shift)
                if r.card is None and not blob.split:  # the same columns against the base moved: no new edges
                    base_rows = self.geo.boundary(r.x, r.y, 0.0, m.cols + zone.origin[0], upper=False)
                    break
        out = _Measured(m, base_rows, np.zeros(len(m.cols), bool))
        if r.card is not None and m.backed is not None:
            self._against_card(zone, r, out)
        return out

    def _against_card(self, zone: ZonePicture, r: _Reading, m: _Measured) -> None:
        """Per column: the top against the felt, or clear of a card and the chip's colour (neither the
        felt's nor the card's) just under it: a top found on a strip of card a pixel or two wide (blurred
        into the chip and the felt) is no top. The other columns are not measured."""
        cols, spans, bottoms, backed, clear = m.columns
        assert r.card is not None and r.direction is not None and backed is not None and clear is not None
        crop = zone.crop
        under = np.clip(np.ceil(bottoms - spans).astype(int)[None, :] + np.arange(1, 5)[:, None],
                        0, crop.shape[0] - 1)
        px = crop[under, np.clip(cols, 0, crop.shape[1] - 1)].astype(np.float32)
        scale = 1.0 / np.maximum(zone.white.astype(np.float32), 1.0)
        chip = np.minimum(((px - zone.felt) * scale) @ r.direction, (px * scale - r.card[1]) @ r.card[2]).min(0) > 0.5
        m.against, m.keep = backed, clear & chip
        if m.keep.sum() < KEEP_SHARE * len(cols):
            raise _GiveUp

    def _height(self, zone: ZonePicture, r: _Reading, m: _Measured, like: bool) -> _Height:
        """The count from the mean span over the columns kept, against the camera model's spans for
        0..N chips there (less the denomination's edge bias), with its uncertainty. Columns whose span
        strays from the others' by over ``OUTLIER_PX`` (a white spot on the top face's rim read as felt,
        a card's edge just behind) are left out when most columns agree. *like*: a card like the chip
        just over the stack: measured only where felt shows between them, and its top face's centre
        must confirm the count."""
        cols, spans, bottoms, _, _ = m.columns
        most = int(min(self.max_stack, np.ceil(r.rough / self.t) + 3))  # rough includes the ellipse
        columns = self.geo.predicted_spans(r.x, r.y, cols + zone.origin[0], most, m.base_rows)  # 0..most chips
        bias = self.models.bias(r.value)  # what the edges measure beyond the geometry (blur, optics)

        def height(keep: np.ndarray) -> tuple[float, float]:  # chips, from the mean span over the columns kept
            predicted = columns[:, keep].mean(1)
            per_chip = (predicted[-1] - predicted[0]) / max(len(predicted) - 1, 1)
            span = float(spans[keep].mean()) - bias
            return float(np.interp(span, predicted, np.arange(len(predicted)), left=0.0,
                                   right=len(predicted) - 1 + (span - predicted[-1]) / per_chip)), per_chip

        keep = np.ones(len(cols), bool) if m.keep is None else m.keep
        wanted = 0
        if like:
            clear = self._clear_of_card(m.columns, columns, bias, zone.not_felt)
            if clear is None:
                raise _GiveUp
            keep = clear
            wanted = max(1, int(round(height(keep)[0])))  # the count the top face's centre must confirm
            if not self.inlay_peaks(zone, r.x, r.y, wanted, r.value):
                raise _GiveUp
        valid = keep.copy()  # the columns measured against the felt or a card unlike the chip
        est, per_chip = height(keep)
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
            raise _GiveUp
        sigma = self._sigma(r, k, (spans - columns[k])[keep], per_chip) * np.sqrt(len(cols) / keep.sum())
        if m.against[keep].any():  # a top against a card: its edge's blur and the card's own edge
            sigma = float(np.hypot(sigma, CARD_SIGMA * m.against[keep].mean()))
        return _Height(est, per_chip, count, sigma, keep, valid, shape, excess)

    def _outline(self, zone: ZonePicture, blob: StackBlob, r: _Reading, m: _Measured, h: _Height,
                 middle: np.ndarray, rims: np.ndarray) -> tuple[bool, bool, tuple[int, ...]]:
        """Whether the stack's outline is not one stack's (*stray*: a column far off the others, chips of
        another denomination under its top not read one by one, a chip under its base, a stack behind it
        seen beside or over it), whether for its side (*side*), and its chips read on its side (a mixed
        stack's, bottom to top; empty when not read)."""
        cols, spans, bottoms, _, _ = m.columns
        keep, per_chip, count, value = h.keep, h.per_chip, h.chips, r.value
        stray = bool(np.abs(h.shape[h.valid] - median(h.shape[h.valid])).max() > STRAY_CHIPS * per_chip)
        layers, foreign = ((), False) if value is None else self.sides.read(zone.crop, zone.origin, zone.white,
                                                                             middle, rims, value, zone.felt)
        side = not layers and (foreign or self._foreign_side(zone, cols[keep], (bottoms - spans)[keep],
                                                             bottoms[keep], value, r.ell) >= FOREIGN_CHIPS * per_chip)
        stray |= side  # chips of another denomination under this top, not read one by one: a stack behind it?
        # not felt just under the base the edges found: a bottom chip unlike the top's colour (a green one on
        # green felt under a red one, measured along the red's direction) that the edges missed
        under = self._under_base(zone, middle, rims) if not stray else 0.0
        stray |= under >= BASE_COVERED
        if not stray:  # or one of another colour under it, dark along the top's colour
            stray = self._unlike_under(zone, middle, rims) >= UNLIKE_COVERED
        if count >= 2 and value in self.sides.side_unsure:  # vouched for chip by chip: and felt under it, seen
            stray |= under >= VOUCHED_BASE  # (a grey 50 under green 200s the edges missed)
        if not stray:  # its blob holds more than this stack: one standing behind it, seen beside it
            beyond, footprint = self.beyond(blob.mask, blob.at, zone.origin, r.x, r.y, count)
            stray = not blob.split and self.beyond_outline(beyond, footprint) > BEYOND_FOOTPRINTS
            if not stray and value is not None:  # or only a sliver of it, of another colour
                stray = self._other_beside(blob.features, beyond, value) >= BEYOND_OTHER * footprint
            if not stray and not blob.split and not layers and count >= 2:  # or over its top, of its colour
                stray = self._face_lower(zone, middle, rims)
        return stray, side, layers

    # -- its columns -----------------------------------------------------------------------------
    def _column_spans(self, zone: ZonePicture, r: _Reading) -> _Columns | None:
        """Sub-pixel silhouette height (crop coordinates) at the columns both the base and the top
        face of a stack about ``r.z`` mm high cover: there the top is the top face's rim, not the side.

        Each column's two ends are found against the felt just beyond them in that column
        (glare and vignetting change the felt from place to place), in the light-normalised
        colour space projected on the denomination's direction (in which its face, side,
        shading and white decorations look alike and the felt differs): the profile is then a
        plain step from felt (0) to chip whose half level is the edge, whatever the blur.
        Without a direction, the distance from the local felt is used. The zone's not-felt mask
        gives each column's rough ends; the stack's own pixels keep a card or stack just behind
        it out of them.

        With a card beside it (``r.card``: the card's pixels, its light-normalised colour and the
        direction from it to the chip's top face, card 0, chip 1): a run of rows never bridges the
        card's pixels; a top with not-felt just over it is where the column leaves the chip's colour,
        for the felt's or the card's: the lesser of the two profiles (chip 1 in both) crosses half the
        chip's level (a strip of felt between chip and card is no chip along the card's direction
        alone). Also returns, per column, whether its top is near a card (None without a card)
        and whether the chip stands clear of it there (a step of over 0.6).
        """
        crop, origin, white, felt, not_felt = zone.crop, zone.origin, zone.white, zone.felt, zone.not_felt
        direction, own, card = r.direction, r.own, r.card
        heights = np.array([0.0, self.top_z, r.z, self.t])
        base, top, near_top, first = self.geo.rings(r.x, r.y, heights)
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
        scale = 1.0 / np.maximum(white.astype(np.float32), 1.0)
        lit = None
        if direction is not None:  # half way to the chip's colour (the direction is scaled so)
            lit = (sub * scale) @ direction  # (linear: projected once)
            mask = lit - (felt * scale) @ direction > 0.3
        else:
            mask = not_felt[r0:r1, span]
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
        if card is not None:  # columns whose top is against a card (or near one)
            assert direction is not None  # (a card is told apart along a denomination's direction)
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
        return _Columns(cols, bottoms - tops, bottoms + r0, backed, clear)

    def _sigma(self, r: _Reading, count: int, shape: np.ndarray, per_chip: float) -> float:
        """The standard uncertainty (chips) of a stack's height measured at its base as *count* chips.

        Four parts: the top chip's own offset on the stack (a stack is never perfectly
        aligned: each chip ``STACK_OFFSET_MM`` per axis off the one under it, so the top
        ``STACK_OFFSET_MM`` times the square root of the chips under it off the base) moves
        its top rim along the line of sight exactly as a height change does, so no picture
        can tell them apart; the edge
        measurement, from how far the columns' spans (*shape*: measured minus the model's,
        px) stray from the model's outline, the columns counting as fewer independent ones
        as far as neighbours' errors go together (lag-one correlation); and what the
        single-chip calibration of the edge bias leaves: how far the denomination's single chips'
        silhouettes strayed from it (``ChipModels.spread``: a green chip on green felt, whose lower edge
        the felt hides, 0.4-1.6 px), at least ``CALIBRATION_SIGMA``; and, for two chips or more whose single
        chips measured short (a negative bias: part of the chip's rim or side read as felt), ``SHORT_CARRY`` of
        that shortfall, which a stack's taller side need not repeat (on the physically based sets, stacks over
        such a bias of -1 px or less measured 0.9 px longer than it allows for, 2.2 px at most; a positive bias,
        the blur's spread, carried over: 0.0 +- 0.5 px). A card or a stack seen behind this
        one, or a torn edge, shows as a shape unlike the outline: a large uncertainty. Height error over
        sigma on plain stacks: a spread of 0.8-0.95, within 3.6, on this renderer's sets; 0.65-1.04,
        within 4.2, on the physically based ones (1,357 stack-frames).
        """
        top, x, y = 0.0, r.x, r.y
        if count >= 2:  # the base chip is where the stack is; the top chip may be off it
            away = np.array([x, y]) - self.geo.cam_xy
            away *= STACK_OFFSET_MM * np.sqrt(count - 1) / max(float(np.linalg.norm(away)), 1e-6)  # a random walk
            z = count * self.t
            moved = self.geo.ring(x + away[0], y + away[1], z)[:, 1].min() - self.geo.ring(x, y, z)[:, 1].min()
            top = abs(float(moved)) / per_chip
        n = len(shape)
        d = shape - shape.mean()
        power = float(d @ d)
        rho = float(np.clip((d[:-1] @ d[1:]) / max(power, 1e-9), 0.0, MAX_COLUMN_CORRELATION))
        n_eff = max(n * (1 - rho) / (1 + rho), 1.0)  # neighbouring columns' errors go together (blur)
        edge = np.sqrt(power / max(n - 1, 1) / n_eff) / per_chip
        bias = max(CALIBRATION_SIGMA, self.models.spread(r.value) / per_chip)
        short = SHORT_CARRY * max(-self.models.bias(r.value), 0.0) / per_chip if count >= 2 else 0.0
        return float(np.sqrt(top ** 2 + edge ** 2 + bias ** 2 + short ** 2))

    # -- its top face --------------------------------------------------------------------------
    def inlay(self, picture: Picture, x: float, y: float, counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The top face's centre (its inlay) and the face around it, were the stack at (x, y) *counts* chips
        high: their median brightness (light-normalised, sum of channels) per count (NaN where out of the
        picture)."""
        crop, origin = picture.crop, picture.origin
        scale = 1.0 / np.maximum(picture.white.astype(np.float32), 1.0)
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

    def inlay_peaks(self, picture: Picture, x: float, y: float, n: int, value: int | None) -> bool:
        """Whether the top face's centre is where a stack of *n* chips at (x, y) has it: its inlay brighter
        than the face around it by at least ``INLAY_SHARE`` of what the chip calibration measured,
        and more so than one chip lower or higher. A top measured against a card like the chip
        that is the card's edge, not the chip's, has it chips lower. False for a denomination
        whose inlay was not seen to stand out (``INLAY_MIN``)."""
        learnt = self.models.inlay.get(value, 0.0) if value is not None else 0.0
        if learnt < INLAY_MIN:
            return False
        counts = [n - 1, n, n + 1] if n > 1 else [n, n + 1]
        centre, face = self.inlay(picture, x, y, counts)
        at = counts.index(n)
        if np.isnan(centre).any():
            return False
        return bool(centre[at] - face[at] >= INLAY_SHARE * learnt and np.argmax(centre) == at
                    and np.sum(centre == centre[at]) == 1)

    def _top_colour(self, zone: ZonePicture, cols: np.ndarray, tops: np.ndarray, ell: int) -> np.ndarray | None:
        """Median colour of the top face just under the measured tops (crop rows) at *cols*."""
        crop, white = zone.crop, zone.white
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

    # -- a card beside it ------------------------------------------------------------------------
    def _card_contrast(self, zone: ZonePicture, card_px: np.ndarray, blob: StackBlob,
                       value: int | None) -> _CardContrast | None:
        """How to tell a split stack's top from the cards beside it: (card, colour, direction),
        the card's pixels near the stack (ROI mask), its light-normalised colour and the
        direction from it to the chip's top face (card 0, chip 1). None when the cards look
        too much like the chip (a red chip against a red back) or nothing tells: such a top
        cannot be told from the card.

        The card's pixels are those of the card's colour joined to the card beside the stack
        (the chip's own white spots are of the card's colour too, but ringed by the chip's)."""
        crop, white = zone.crop, zone.white
        model = self.models.chips.get(value) if value is not None else None
        if model is None:
            return None
        beside = _beside(card_px, blob.at, blob.mask.shape)
        if beside is None:
            return None
        w0, w1, near = beside
        y, height = blob.at[1], blob.mask.shape[0]
        scale = 1.0 / np.maximum(white.astype(np.float32), 1.0)
        win = cv2.blur(crop[:y + height, w0:w1], (3, 3)).astype(np.float32) * scale
        card = np.median(win[near], 0)
        cb, cg, v = model.mean
        chip = np.array([cb * 3 * v, cg * 3 * v, (1 - cb - cg) * 3 * v], np.float32)
        if float(model.distance(features(card[None, :] / scale, white))[0]) < CARD_SEPARATION:
            return None
        d = (chip - card) / float((chip - card) @ (chip - card))
        like = ((((win - card) @ d) < 0.5) & zone.not_felt[:y + height, w0:w1]).astype(np.uint8)
        n, labels = cv2.connectedComponents(like, connectivity=4)
        joined = np.zeros(n, bool)
        joined[np.unique(labels[near & (like > 0)])] = True
        joined[0] = False
        region = np.zeros_like(card_px)
        region[:y + height, w0:w1] = joined[labels]
        return region, card, d.astype(np.float32)

    def _split_colour(self, zone: ZonePicture, blob: StackBlob, lying: np.ndarray, ell: int) -> np.ndarray | None:
        """A split stack's top face colour before its denomination is known: the top rows, in its
        middle columns, of its blob joined again to its pixels on the card area, less the pixels
        of the card's colour joined to the card beside it (a split blob's own top rows may be
        its side, the card area having taken its top). None if no card is seen beside it."""
        crop, white, card_px = zone.crop, zone.white, blob.card_px
        assert card_px is not None  # (split)
        beside = _beside(lying, blob.at, blob.mask.shape)  # the card beside it, not a stack standing beside it
        if beside is None:
            return None
        w0, w1, near = beside
        x, y = blob.at
        height, width = blob.mask.shape
        lo, hi = max(x - 3, 0), min(x + width + 3, card_px.shape[1])  # the stack's own columns
        f = features(cv2.blur(crop[:y + height, w0:w1], (3, 3)), white)
        med = np.median(f[near], 0)
        spread = np.maximum(robust_spread(f[near], med), (0.012, 0.012, 0.04))
        like = ((np.abs((f - med) / spread).max(-1) < 4) & zone.not_felt[:y + height, w0:w1]).astype(np.uint8)
        n, labels = cv2.connectedComponents(like, connectivity=4)
        joined = np.zeros(n, bool)
        joined[np.unique(labels[near & (like > 0)])] = True
        joined[0] = False
        ext = (blob.own[:y + height, lo:hi] | card_px[:y + height, lo:hi]) & ~joined[labels[:, lo - w0:hi - w0]]
        cols = np.arange(x + width // 4, x + width - width // 4)
        cols = cols[(cols >= lo) & (cols < hi)]
        cols = cols[ext[:, cols - lo].any(0)]
        if len(cols) < 2:
            return None
        first = np.argmax(ext[:, cols - lo], axis=0).astype(float)
        return self._top_colour(zone, cols, first, ell)

    def _clear_of_card(self, measured: _Columns, columns: np.ndarray, bias: float,
                       not_felt: np.ndarray) -> np.ndarray | None:
        """The columns of a stack whose top is seen against the felt when a card like the chip lies
        just beyond it (a red back behind a red stack): None when too few are. *columns*: the
        model's spans of 0..N chips at each measured column.

        Chip and card cannot be told apart where they touch, so a column whose run of the chip's
        colour goes on into the card measures the card, never less than the stack: it is too
        tall. The stack's top is where the columns with felt just over it (``CLEAR_ROWS`` rows)
        agree on the fewest chips; the columns taller than that by over half a chip are the card's.
        """
        cols, spans, bottoms = measured.cols, measured.spans, measured.bottoms
        tops = np.floor(bottoms - spans).astype(int)
        over = tops[None, :] - np.arange(2, CLEAR_ROWS + 2)[:, None]  # the row just over it is the blurred edge
        c = np.clip(cols, 0, not_felt.shape[1] - 1)
        clear = (over.min(0) >= 0) & ~not_felt[np.clip(over, 0, None), c].any(0)
        if not clear.any():
            return None
        chips = np.array([np.interp(spans[j] - bias, columns[:, j], np.arange(len(columns)), right=np.inf)
                          for j in range(len(cols))])
        with np.errstate(invalid="ignore"):  # every clear column over the model's tallest (inf - inf): none kept
            keep = clear & (chips - chips[clear].min() <= 0.5)
        return keep if keep.sum() >= max(CLEAR_COLUMNS, CLEAR_SHARE * len(cols)) else None

    # -- its outline -----------------------------------------------------------------------------
    def beyond(self, blob: np.ndarray, at: tuple[int, int], origin: tuple[int, int], x: float, y: float,
               count: int) -> tuple[np.ndarray, float]:
        """The pixels of a stack's *blob* (its box at *at* in a crop at *origin*) beyond the outline of
        *count* chips stacked at (x, y) (widened by ``OUTLINE_BLUR_PX`` for the blur), and a chip's footprint on
        the felt there (px)."""
        ring = self.geo.ring(x, y, 0.0)
        hull = self.geo.outline(x, y, count, OUTLINE_BLUR_PX, ring) - origin - at
        near = np.zeros(blob.shape, np.uint8)
        cv2.fillConvexPoly(near, np.round(hull * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        footprint = float(np.ptp(ring[:, 0]) * np.ptp(ring[:, 1]) * np.pi / 4)
        beyond: np.ndarray = blob & ~near.view(bool)
        return beyond, max(footprint, 1.0)

    @staticmethod
    def beyond_outline(beyond: np.ndarray, footprint: float) -> float:
        """How much of a stack's blob lies beyond its outline (*beyond*, *footprint*: :meth:`beyond`), in
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
        n, _, stats, _ = components(cv2.morphologyEx(patch, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
        return int(stats[1:, cv2.CC_STAT_AREA].max()) if n > 1 else 0

    def _foreign_side(self, zone: ZonePicture, cols: np.ndarray, tops: np.ndarray, bottoms: np.ndarray,
                      value: int | None, ell: int) -> float:
        """How many rows (px) of a stack's side, under its top face, are another denomination's
        colour: a stack standing behind another in the picture, its top over the other's, reads
        as one taller stack of the colour of its top. Each row's colour is its median over the
        measured columns (a white spot covers few of them); a row is another denomination's when
        its chroma is over ``FOREIGN_SPREADS`` from the top's model and within ``OTHER_SPREADS``
        of another's, at a level between that chip's shaded side and its face."""
        crop, white = zone.crop, zone.white
        if value not in self._models or len(cols) == 0 or len(self._models[value][0]) < 2:
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

    @staticmethod
    def _base_rows(zone: ZonePicture, cols: np.ndarray, rims: np.ndarray,
                   *depths: float) -> tuple[list[np.ndarray], np.ndarray]:
        """The crop's rows *depths* chips under a stack's base's front rim (*rims*: ``geo.rims``) at its
        middle *cols*, and those columns in the crop."""
        base = rims[0]
        rise = float(median(base - rims[1]))
        rows = [np.round(base + depth * rise).astype(int) - zone.origin[1] for depth in depths]
        return rows, cols - zone.origin[0]

    def _bare_base(self, zone: ZonePicture, cols: np.ndarray, rims: np.ndarray) -> bool:
        """Whether the bottom chip of a stack (its middle *cols* and layers' front *rims*: ``geo.rims``) shows a
        side flatter than ``BARE_BASE`` of its other chips' (each chip's row midway up its side: spread over
        level): felt in the stack's shadow cast toward the camera, read as a chip (a dark chip's side, reflecting
        the felt, is as dark and as green as that shadow). Not for fewer than ``BARE_CHIPS`` chips, nor sides
        without texture."""
        if len(rims) - 1 < BARE_CHIPS:
            return False
        px = sample(zone.crop, zone.origin, cols, (rims[:-1] + rims[1:]) / 2)
        if px is None:
            return False
        grey = px.mean(2)
        texture = grey.std(1) / np.maximum(grey.mean(1), 1.0)
        others = float(np.median(texture[1:]))
        return others >= SIDE_TEXTURE and float(texture[0]) < BARE_BASE * others

    def _under_base(self, zone: ZonePicture, cols: np.ndarray, rims: np.ndarray) -> float:
        """The share of a stack's middle *cols* (and its layers' front *rims*: ``geo.rims``) unlike the
        zone's felt around it ``UNDER_BASE`` of a chip under its base's front rim: felt there unless a chip
        under it was missed (a chip the felt test takes for lit felt, a green one on green felt, is still
        unlike the felt beside it)."""
        crop, felt = zone.crop, zone.felt
        (rows,), c = self._base_rows(zone, cols, rims, UNDER_BASE)
        inside = (c >= 0) & (c < crop.shape[1]) & (rows >= 0) & (rows < crop.shape[0])
        if inside.sum() < 3:
            return 0.0
        px = crop[rows[inside], c[inside]].astype(np.float32)
        off = np.linalg.norm(px - felt, axis=1) / max(float(np.linalg.norm(felt)), 1.0)
        return float((off > FELT_APART).mean())

    def _unlike_under(self, zone: ZonePicture, cols: np.ndarray, rims: np.ndarray) -> float:
        """The share of a stack's middle *cols* whose pixel ``UNLIKE_DEPTH`` of a chip under its base's front
        rim (*rims*: ``geo.rims``) lies over ``UNLIKE_BLEND`` (share of the felt's norm) off every blend of the
        felt and its bottom chip's side in that column: the base's blurred edge is such a blend, a chip of
        another colour under the base is not (a black 1000 under red 100s, which the edges measured along
        the red's colour took for felt: the stack read as the 100s alone)."""
        crop = zone.crop
        # under it, and the bottom chip's side mid-way up
        (under, side), c = self._base_rows(zone, cols, rims, UNLIKE_DEPTH, -0.5)
        inside = (c >= 0) & (c < crop.shape[1]) & (side >= 0) & (under < crop.shape[0])
        if inside.sum() < 3:
            return 0.0
        px = crop[under[inside], c[inside]].astype(np.float32)
        felt = np.asarray(zone.felt, np.float32)
        d = crop[side[inside], c[inside]].astype(np.float32) - felt
        share = np.clip(((px - felt) * d).sum(1) / np.maximum((d * d).sum(1), 1.0), 0.0, 1.0)  # of the chip
        off = np.linalg.norm(px - felt - share[:, None] * d, axis=1) / max(float(np.linalg.norm(felt)), 1.0)
        return float((off > UNLIKE_BLEND).mean())

    def _face_lower(self, zone: ZonePicture, cols: np.ndarray, rims: np.ndarray) -> bool:
        """Whether a stack (its middle *cols* and layers' front *rims*: ``geo.rims``) shows the step from
        side to face (brighter) under a lower rim than its top's: ``FACE_STEP`` or more there, and under
        ``FACE_STEP_SHARE`` of it under the top rim; or none under the top rim (``FACE_ABSENT``). Two stacks
        of one colour, one touching the other just behind it along the line of sight, make one silhouette
        whose top is the one behind's face, seen over the front one's: read as one stack two chips taller
        (a held-out take: five 50s and four 50s behind them read as seven).
        Each rim's step: over the middle half of the columns, the median of the mean brightness 1 and 1.5
        rows over it less 1 and 1.5 rows under it."""
        px = sample(zone.crop, zone.origin, cols, rims[1:, None, :] + np.array([-1.5, -1.0, 1.0, 1.5])[None, :, None])
        if px is None:
            return False
        level = (px / np.maximum(zone.white.astype(np.float32), 1.0)).sum(-1)  # rims x 4 x columns
        steps = median(level[:, :2].mean(1) - level[:, 2:].mean(1), axis=1)
        lower, top = float(steps[:-1].max()), float(steps[-1])
        return (lower >= FACE_STEP and top <= FACE_STEP_SHARE * lower) or top <= FACE_ABSENT


def count_confidence(est: float, sigma: float) -> float:
    """A count's confidence from its height *est* (chips) and that height's uncertainty *sigma*:
    at least MIN_CONFIDENCE only when the half-way point to the next count is over
    ``CONFIDENT_SIGMAS`` uncertainties away: a wrong count then needs an error of over
    0.5 + CONFIDENT_SIGMAS * sigma chips: 4 to 7.5 sigma for a plain stack (sigma 0.08-0.2)."""
    if est < 0.5:
        return 0.0
    off = abs(est - round(est))
    return float(np.clip((0.5 - off) / (2 * CONFIDENT_SIGMAS * max(sigma, 1e-6)), 0.0, 1.0))


def _nearest_chroma(px: np.ndarray, models: list[ColourModel]) -> np.ndarray:
    """Each pixel's (N x 3 features) chroma distance to the nearest of *models*, in spreads."""
    return np.min([m.chroma_distance(px) for m in models], axis=0)


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
