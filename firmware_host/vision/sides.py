"""A stack's chips read one by one on its side (a mixed stack's amount; whether a plain stack's chips are
all its top's denomination): each chip's side colour, midway between its rims, against each denomination's
side model learnt by chip calibration; the look-alike pairs and the rules that keep a chip of another
denomination under a top from going unseen (docs/vision.md, "Why the rest is uncertain")."""
from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from calibration.chips import ChipModels, side_features
from firmware_host.vision.arrays import median
from firmware_host.vision.results import MIN_CONFIDENCE

__all__ = ["SideReader", "sample"]

SIDE_SHIFT = 0.25  # chips: a mixed stack's chips are read again this much lower and higher, and must read alike
SIDE_CONFIDENCE = 0.8  # a chip's side read as a denomination with this confidence: a mixed stack's chip
FOREIGN_NEARER = 1 / 3  # a chip's side this much nearer (distance ratio) another denomination's side than the
# top's, as read or relative to the top chip's side: not the top's, however far from every model it is
FOREIGN_CONFIDENCE = 0.8  # a chip's side read as another denomination than the top's with this confidence:
# not one stack of the top's denomination (a mixed stack, or one standing behind it)
LEVEL_APART = 0.3  # a chip's side this much (natural logarithm of the level) off its stack's top chip's: another
# denomination's, if nearer its side model (a plain stack's chips, 95 %: under 0.47; under 0.3 in 89 %)
LEVEL_FLOOR = 0.06  # and this much (share of the white patch): a black chip's edge gets light added, not scaled
SIDE_FAR = 4.0  # with LEVEL_APART: a lower chip this many spreads from the top's side model is not the top's
SIDE_UNLIKE = 8.0  # a chip's side this many spreads from the top's side model, as read and relative to the top
# chip's side: not the top's denomination, whichever it is nearest to (a side far from every model)
PAIR_UNLIKE, PAIR_NEARER = 5.0, 0.7  # two lower chips' sides each this many spreads from the top's side model
# and this much nearer another's: a mixed stack, or too ambiguous to call plain (docs/vision.md)
PAIR_HALF, PAIR_HALF_UNLIKE = 0.5, 3.0  # or each twice as near another's and this many spreads off (a soft
# picture blurs a chip's side into its neighbours': fewer spreads off, still nearer another)
BLURRED_BOTTOM = 3.0  # a mixed stack's bottom chip whose side is this many spreads (its reading's side model) from
# the chip above's blurred into the felt under it: not read (a soft picture: 2000s on green felt read as a 50)
BLEND_SHARE, BLEND_SPREADS = 0.25, 3.0  # a lower chip's side this share of the way from the top's side model towards
# another's, and this many spreads, nearer that line than along it: the other's colour in its row (a mixed stack)
SIDE_BLUR = 0.4  # the camera's blur (sigma, px; calibration, on the markers' edges) over a chip's rows on a stack's
# side beyond which a chip's row is too much its neighbours': the side tells nothing (a stack of 2 or more uncertain)
MIXED_ROWS = 3.0  # the least rows a chip takes on a stack's side for a mixed stack's chips to be read one by one:
# the picture's chroma has half its rows (JPEG, the camera's YUV 4:2:0), and a chip under 3 rows may hold no chroma
# row of its own (posts 800 mm high: two 200s read as a 50 under a 200 at 2.5 rows, confidence 0.79)
VOUCHED_BOTTOM = 0.8  # the least confidence of such a stack's bottom chip read on its side (blurred into the felt)


def sample(crop: np.ndarray, origin: tuple[int, int], cols: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """*crop*'s BGR at image columns *cols* and rows *rows* (... x columns, between pixels), as float;
    None when fewer than 3 columns or any point out of the crop."""
    rows = (rows - origin[1]).astype(np.float32)
    cols = cols - origin[0]
    h, w = crop.shape[:2]
    if len(cols) < 3 or cols[0] < 0 or cols[-1] >= w or rows.min() < 0 or rows.max() >= h - 1:
        return None
    flat = rows.reshape(-1, len(cols))
    grid = np.ascontiguousarray(np.broadcast_to(cols.astype(np.float32)[None, :], flat.shape))
    px: np.ndarray = cv2.remap(crop, grid, flat, cv2.INTER_LINEAR).astype(np.float32)
    return px.reshape(*rows.shape, -1)


class SideReader:
    """Reads stacks' sides with chip calibration's *models* (their side models and look-alike pairs)."""

    def __init__(self, models: ChipModels, blur_px: float | None = None) -> None:
        self.models = models
        self.blur_px = blur_px  # the camera's (None: not measured, an older calibration file)
        # the denominations whose side looks like another's: a chip is not read as one, and a stack topped by
        # one is counted only when each of its chips vouches for it (those under the top could be the look-alike's)
        self.side_unsure = frozenset(v for a, b, _ in models.side_alike for v in (a, b))
        # those whose side looks like another's in logarithm of the level too: only chips read with confidence vouch
        self.level_unsure = frozenset(v for a, b, _ in models.level_alike for v in (a, b))

    def side_bgr(self, crop: np.ndarray, origin: tuple[int, int], cols: np.ndarray, rims: np.ndarray,
                  shift: float = 0.0) -> np.ndarray | None:
        """Each chip's side colour (count x 3 BGR, bottom to top) of a stack (its middle *cols* and layers'
        front *rims*: ``geo.rims``): per chip, the median over those columns of the row midway between
        the front rims of its bottom and its top (*shift* chips up from there), sampled between pixels
        (a white edge spot covers few columns); None when out of the crop."""
        px = sample(crop, origin, cols, rims[:-1] + (rims[1:] - rims[:-1]) * (0.5 + shift))
        if px is None:
            return None
        side: np.ndarray = median(px, axis=1)
        return side

    def read(self, crop: np.ndarray, origin: tuple[int, int], white: np.ndarray, cols: np.ndarray,
               rims: np.ndarray, value: int, felt: np.ndarray | None = None) -> tuple[tuple[int, ...], bool]:
        """A stack's chips (its middle *cols* and layers' front *rims*: ``geo.rims``) read on its side:
        each chip's value bottom to top when every one is read with ``SIDE_CONFIDENCE``, none as a
        denomination whose side looks like another's (``ChipModels.side_alike``), the top one is the top
        face's *value* and one is not (a mixed stack), and whether a lower chip reads as another
        denomination (when the top's side reads as its face), unlike the top's or its level apart (a mixed
        stack, or one behind it), or the side cannot tell (the top's side looks like another
        denomination's and the chips are not :meth:`vouched` for, a mixed stack's bottom chip reads as
        the chip above it :meth:`blurred` into the *felt*: BGR, under this light, its chips take under
        ``MIXED_ROWS`` rows, or the camera is :meth:`too_soft` for its rows)."""
        count = len(rims) - 1
        if count >= 2 and self.too_soft(rims):
            return (), True
        alike = count >= 2 and value in self.side_unsure  # a hidden chip could be the look-alike's
        bgr = self.side_bgr(crop, origin, cols, rims) if self.models.side else None
        if bgr is None:
            return (), alike
        side = side_features(bgr, white)
        read = self.models.classify_side(side)
        below = self.below_top(side, value)
        foreign = read[-1][0] == value and any(v != value and c >= FOREIGN_CONFIDENCE for v, c in read[:-1])
        if not foreign:
            nearer = self.models.side_nearer(below, value)
            foreign = (bool((nearer <= FOREIGN_NEARER).any()) or self.unlike(below, value, count - 1, nearer)
                       or self.level_apart(side, value))
        if alike:  # no chip of it is read: a plain stack if each chip vouches for it (its chroma as noisy
            vouch = self.models.classify_side(side, dark=True)  # as its level is dark), none part another's
            return (), (foreign or not self.vouched(vouch, value, value in self.level_unsure)
                        or self.blend(below, value, count - 1))
        if (not foreign or read[-1][0] != value or min(c for _, c in read) < SIDE_CONFIDENCE
                or any(v in self.side_unsure for v, _ in read)  # a chip read as a look-alike side: not read
                or all(v == value for v, _ in read)):  # found mixed, read plain: the evidence disagrees
            return (), foreign
        layers = tuple(int(v) for v, _ in read if v is not None)
        if felt is not None and layers[0] != layers[1] and self.blurred(bgr[:2], white, felt, layers[0]):
            return (), True
        if float(median(rims[:-1] - rims[1:])) < MIXED_ROWS:  # each chip's colour partly its neighbours'
            return (), True
        for shift in (-SIDE_SHIFT, SIDE_SHIFT):  # each chip read the same a little lower and higher: the
            moved = self.side_bgr(crop, origin, cols, rims, shift)  # rows are on the chips, not between
            again = [] if moved is None else [v for v, _ in self.models.classify_side(side_features(moved, white))]
            if tuple(again) != layers:
                return (), True
        return layers, True

    def too_soft(self, rims: np.ndarray) -> bool:
        """Whether the camera's blur is over ``SIDE_BLUR`` of the rows a chip takes on a stack's side (its
        layers' front *rims*, bottom to top): each chip's row is then as much its neighbours' as its own."""
        return self.blur_px is not None and self.blur_px > SIDE_BLUR * float(median(rims[:-1] - rims[1:]))

    def blurred(self, bgr: np.ndarray, white: np.ndarray, felt: np.ndarray, value: int) -> bool:
        """Whether a stack's bottom chip's side (``bgr[0]``), read as *value*, is within ``BLURRED_BOTTOM``
        of *value*'s side spreads of the side of the chip above it (``bgr[1]``) mixed with the *felt*
        in some share: a blur that spreads the felt over the bottom chip's rows makes such a colour."""
        share = np.linspace(0.0, 1.0, 21, dtype=np.float32)[:, None]
        mixed = side_features(share * bgr[1] + (1 - share) * np.asarray(felt, np.float32), white)
        bottom = side_features(bgr[:1], white)
        spread = np.asarray(self.models.side[value].spread, np.float32)
        return bool(np.sqrt((((mixed - bottom) / spread) ** 2).sum(-1)).min() <= BLURRED_BOTTOM)

    @staticmethod
    def vouched(read: Sequence[tuple[int | None, float]], value: int, level_alike: bool = False) -> bool:
        """Whether a stack's chips (*read* on its side, bottom to top) vouch for a plain stack of *value*
        when its side looks like another denomination's: each read as *value*, those under the top
        with ``MIN_CONFIDENCE`` when the two are apart in logarithm of the level (the look-alike's chip
        would read otherwise), with ``SIDE_CONFIDENCE`` when they are not (*level_alike*: only a chip
        much nearer *value*'s side than the look-alike's vouches), and the bottom chip, blurred into the
        felt, with ``VOUCHED_BOTTOM`` (a grey 50 under green 200s on green felt read as a 200 at 0.61);
        felt under its base is the counter's (``VOUCHED_BASE``). The top chip's side, its row blurred
        with the brighter face over it, must only not read as another with ``FOREIGN_CONFIDENCE``."""
        least = SIDE_CONFIDENCE if level_alike else MIN_CONFIDENCE
        top, top_confidence = read[-1]
        return (all(v == value for v, _ in read[:-1]) and read[0][1] >= VOUCHED_BOTTOM
                and min(c for _, c in read[:-1]) >= least and (top == value or top_confidence < FOREIGN_CONFIDENCE))

    def unlike(self, below: np.ndarray, value: int, n: int, nearer: np.ndarray) -> bool:
        """Whether a stack's *n* lower chips (*below*: as :meth:`below_top` gives them) are unlike *value*'s
        side, both as read and relative to the top chip: one over ``SIDE_UNLIKE`` spreads from its side model,
        or two each ``PAIR_UNLIKE`` spreads from it and ``PAIR_NEARER`` nearer (distance ratio) another
        denomination's side, or ``PAIR_HALF_UNLIKE`` and ``PAIR_HALF`` (one chip so is a glint or an edge
        insert; two, a mixed stack, or a side too ambiguous to call plain). *nearer*:
        ``ChipModels.side_nearer`` of *below*."""
        if value not in self.models.side or n == 0:
            return False
        d = self.models.side[value].distance(below)
        if len(d) == 2 * n:
            d, nearer = np.minimum(d[:n], d[n:]), np.minimum(nearer[:n], nearer[n:])
        pair = ((d >= PAIR_UNLIKE) & (nearer <= PAIR_NEARER)) | ((d >= PAIR_HALF_UNLIKE) & (nearer <= PAIR_HALF))
        return bool((d > SIDE_UNLIKE).any() or pair.sum() >= 2)

    def blend(self, below: np.ndarray, value: int, n: int) -> bool:
        """Whether one of a stack's *n* lower chips (*below*: as :meth:`below_top` gives them) lies
        ``BLEND_SHARE`` of the way from *value*'s side model towards another denomination's, and
        ``BLEND_SPREADS`` spreads at least, nearer that line than along it, as read and relative to the top
        chip: that chip's row holds the other's colour in part (a green 200 under grey 50s, its row
        blurred with theirs, read as a 50 at 0.94), not a chip of *value* off its model at random."""
        if value not in self.models.side or n == 0:
            return False
        own = self.models.side[value]
        mean, spread = np.asarray(own.mean, np.float32), np.asarray(own.spread, np.float32)
        off = (below - mean) / spread  # rows x 3, in the top's spreads
        for other, model in self.models.side.items():
            if other == value:
                continue
            line = (np.asarray(model.mean, np.float32) - mean) / spread
            length = float(np.linalg.norm(line))
            unit = line / max(length, 1e-6)
            along = off @ unit  # spreads towards the other
            across = np.linalg.norm(off - along[:, None] * unit[None, :], axis=1)
            hit = (along >= np.maximum(BLEND_SHARE * length, BLEND_SPREADS)) & (across <= along)
            if len(hit) == 2 * n:
                hit = hit[:n] & hit[n:]
            if hit.any():
                return True
        return False

    def level_apart(self, side: np.ndarray, value: int) -> bool:
        """Whether a chip under a stack's top (*side*: its chips' side features, bottom to top) is
        ``LEVEL_APART`` (logarithm of the level) and ``LEVEL_FLOOR`` darker or brighter than the top
        chip, and nearer another denomination's side than *value*'s or, darker, ``SIDE_FAR`` from it:
        two chips of one stack, under one light, differ in level by its shading only (a stack's
        shadow read as a chip under it does not)."""
        below = side[:-1]
        if len(below) == 0 or value not in self.models.side:
            return False
        apart = ((np.abs(below[:, 2] - side[-1, 2]) >= LEVEL_APART)
                 & (np.abs(np.exp(below[:, 2]) - np.exp(side[-1, 2])) >= LEVEL_FLOOR))
        far = (below[:, 2] < side[-1, 2]) & (self.models.side[value].distance(below) > SIDE_FAR)  # a shadow?
        unlike = (self.models.side_nearer(below, value) < 1) | far
        return bool((apart & unlike).any())

    def below_top(self, side: np.ndarray, value: int) -> np.ndarray:
        """The sides (features) of a stack's chips under its top, as read and as read relative to the
        top chip's: shifted in chroma so that the top's sits on *value*'s side model (a light the
        calibration did not see shifts every chip's side of one stack alike)."""
        below = side[:-1]
        if value not in self.models.side or len(below) == 0:
            return below
        shift = np.asarray(self.models.side[value].mean, np.float32) - side[-1]
        shift[2] = 0.0
        return np.vstack([below, below + shift])
