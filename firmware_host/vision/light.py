"""The light a frame was taken in, against the calibration's: the white reference patch (what colours are
normalised by), the colour card's correction and a light beyond what calibration covers (``relit``), each
chip zone's felt level against the calibration pictures' (a spot moved, a lamp out), and the felt test
(:meth:`TableLight.not_felt`: the felt's colour at any level plus white glare, bounded about each zone's
own level; a neutral felt's level alone: :class:`FeltTest`). docs/vision.md, "Counting", "The felt's level
bounded about each zone's own light" and "A felt of the white patch's colour"."""
from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from calibration.chips import ChipModels
from calibration.geometry import TableCalibration, out_of_view
from firmware_host.vision.arrays import bgr, every, median
from firmware_host.vision.colour import CardReference, Correction, card_seen
from firmware_host.vision.colour import fit as fit_colour
from firmware_host.vision.projection import ZoneRoi

__all__ = ["LIGHT_APART", "SATURATED", "FeltTest", "TableLight", "colour_card"]

FELT_RESIDUAL = 0.10  # share of the felt's norm a pixel may stray from felt-times-light plus glare
FELT_GLARE = 0.3  # the most white (share of the reference patch) a lamp's reflection adds to the felt
FELT_UNGLARE = 0.25  # the most white (share of the reference patch) the felt may lack against its colour at its
# level: a darker, more saturated colour of its hue (skin over a beige felt: 0.45) is something on it
FELT_SHADE = 0.4  # the darkest the felt may be (share of its calibrated level): a shadow deeper than this is not felt
FELT_BRIGHT = 1.6  # the brightest the felt may be (share of its calibrated level)
NEUTRAL_FELT = 0.08  # a felt whose colour is this near the white patch's (sine of the angle between them) is neutral:
# glare is not told from more light on it (a charcoal felt: 0.03; the renderer's beige felt 0.13, its green 0.5)
NEUTRAL_BRIGHT = 1.3  # and the brightest it may be: only its level tells a grey chip from it
REFERENCE_MIN_LEVEL, REFERENCE_MAX_SPREAD = 40.0, 0.12  # the white patch: bright enough, even (std / mean)
CARD_NOISE = 4.0  # grey levels of noise a colour card patch may show beyond REFERENCE_MAX_SPREAD of its level
SATURATED = 250.0  # a patch channel this bright has clipped: the exposure is too long
LIGHT_APART = 1.5  # a chip zone's felt this many times brighter or darker, against the rest of the table's, than
# in the calibration pictures (a spot moved, a lamp out): its chips are not counted (learnt in other light)
LIGHT_PIXELS = 60  # felt pixels (every fourth row and column) a zone's light is measured on


class FeltTest:
    """Which pixels (normalised by the white patch) are a felt of colour *mean* (features: chroma b, chroma g,
    level): its colour times a level plus white glare, the rest (the residual, across both) small; a neutral
    felt (grey, charcoal: within ``NEUTRAL_FELT`` of the white patch's colour) cannot tell glare from more
    light, so a pixel is its level and two components across its colour, each within the residual's bound."""

    def __init__(self, mean: Sequence[float]) -> None:
        cb, cg, v = mean
        felt = np.array([cb * 3 * v, cg * 3 * v, (1 - cb - cg) * 3 * v], np.float32)
        self.bound = FELT_RESIDUAL * float(np.linalg.norm(felt))
        cross = np.cross(felt, np.ones(3, np.float32))  # what felt and glare cannot explain: one direction
        self.neutral = float(np.linalg.norm(cross)) < NEUTRAL_FELT * float(np.linalg.norm(felt)) * np.sqrt(3)
        if self.neutral:
            _, _, axes = np.linalg.svd(felt[None, :])  # the felt's direction, then two across it
            self.split = np.vstack([felt / float(felt @ felt), axes[1:]]).astype(np.float32)
            self.glare, self.brightest = (-self.bound, self.bound), NEUTRAL_BRIGHT  # (level, across, across)
        else:
            B = np.column_stack([felt, np.ones(3, np.float32)])  # felt under more or less light, plus white glare
            coef = np.linalg.pinv(B).astype(np.float32)  # 2 x 3
            normal = cross / max(float(np.linalg.norm(cross)), 1e-9)
            self.split = np.vstack([coef, normal]).astype(np.float32)  # (felt level, glare, residual)
            self.glare, self.brightest = (-FELT_UNGLARE, FELT_GLARE), FELT_BRIGHT

    def bounds(self, lit: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The felt's bounds (low, high) of :attr:`split`'s parts where it is lit *lit* times its level at
        calibration: the level's lower bound times *lit* where that is under 1, the upper bound and the
        residual's times it where it is over 1 (as a neutral felt's components across it)."""
        wide = max(lit, 1.0)
        across = (self.glare[0] * wide, self.glare[1] * wide) if self.neutral else self.glare
        return ((FELT_SHADE * min(lit, 1.0), across[0], -self.bound * wide),
                (self.brightest * wide, across[1], self.bound * wide))


class TableLight:
    """The light of one calibrated camera's frames (*calib*) against its chip calibration's (*models*), over
    its chip zones (*rois*). Keeps the last frame's colour correction and zones' light (the health check
    and the count ask for the same frame)."""

    def __init__(self, calib: TableCalibration, models: ChipModels, rois: Sequence[ZoneRoi]) -> None:
        self.calib, self.models, self.rois = calib, models, rois
        self.cam = calib.camera
        lay = calib.layout
        self.ref_box, self.ref_mask = self._patch_box(np.array(lay.reference))  # the white patch's middle
        self.card = models.card  # the colour card under the calibration's light (None: white patch only)
        self.patch_boxes = {p.name: self._patch_box(np.array(p.polygon)) for p in lay.mount().patches}
        self._correction: tuple[np.ndarray, Correction | None] | None = None  # the last frame's, and its frame
        self._light: tuple[np.ndarray, dict[str, float]] | None = None  # the last frame's zones' light, relative
        self.felt = FeltTest(models.felt.mean)
        self._felt_table = self.felt.bounds(1.0)  # the bounds where a zone's light was not learnt
        # per chip zone, the level bounds about its felt's level in the calibration pictures (a spot's pool)
        self._felt_bounds = {z: self.felt.bounds(lit) for z, lit in models.felt_light.items()}

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
            if y0 < 0 or x0 < 0 or y1 > frame.shape[0] or x1 > frame.shape[1]:
                return None  # (out of the picture: calibration says so)
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
        card to tell by, or the card is covered), or has moved on some chip zones (:meth:`apart`)."""
        correction = self.correction(frame)
        why = None if correction is None else correction.relit()
        apart = self.apart(frame) if why is None else {}
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
        test = self.felt
        split = test.split * (1.0 / np.maximum(self.white(frame).astype(np.float32), 1.0)).reshape(1, 3)
        out = {}
        for roi in self.rois:
            if roi.zone.kind == "cards":
                continue
            parts = cv2.transform(every(frame[roi.y0:roi.y1, roi.x0:roi.x1], 4).astype(np.float32), split)
            level, glare, residual = parts[..., 0], parts[..., 1], parts[..., 2]
            # brighter than the felt model, its colour may stray that many times further (as counting allows)
            stray = test.bound * np.maximum(level, 1.0)
            felt = ((level >= FELT_SHADE) & (level <= 10.0) & (np.abs(residual) <= stray)
                    & ((np.abs(glare) <= stray) if test.neutral else (-FELT_UNGLARE <= glare) & (glare <= FELT_GLARE)))
            here = level[felt & roi.mask[::4, ::4]]
            if len(here) >= LIGHT_PIXELS:
                out[roi.zone.name] = float(median(here))
        return out

    def moved(self, frame: np.ndarray) -> dict[str, float]:
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

    def apart(self, frame: np.ndarray) -> dict[str, float]:
        """The chip zones whose light has moved beyond ``LIGHT_APART`` either way (:meth:`moved`):
        a spot moved or a lamp out over it."""
        return {zone: r for zone, r in self.moved(frame).items() if abs(np.log(r)) > np.log(LIGHT_APART)}

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

    def not_felt(self, crop: np.ndarray, white: np.ndarray, zone: str | None = None) -> np.ndarray:
        """Pixels that are not felt: not the felt's colour at some light level plus some white glare (the
        level's bounds about *zone*'s felt level in the calibration pictures, where known)."""
        scale = (1.0 / np.maximum(white.astype(np.float32), 1.0)).reshape(1, 3)
        parts = cv2.transform(crop.astype(np.float32), self.felt.split * scale)  # (felt level, glare, residual)
        low, high = self._felt_bounds.get(zone or "", self._felt_table)
        off: np.ndarray = cv2.inRange(parts, low, high) == 0
        return off


def colour_card(light: TableLight, pictures: list[np.ndarray]) -> tuple[CardReference | None, str]:
    """The camera's colour card as the calibration *pictures* show it (their mean), or None and why
    not: no card in the layout, a patch covered, or patches unlike the printed card
    (:func:`vision.colour.card_seen`). Without it the counter normalises by the white patch alone."""
    printed = {p.name: p.srgb for p in light.calib.layout.mount().patches}
    if not printed:
        return None, "the layout gives this camera no colour card"
    cut = [f"{name} by {px:.0f} px" for name, px in out_of_view(light.calib).items() if name.startswith("colour patch")]
    if cut:
        return None, f"the colour card lies partly out of the camera's picture ({', '.join(cut)})"
    seen = [light.card_colours(p) for p in pictures]
    if any(s is None for s in seen):
        return None, "the colour card is not seen whole in every calibration picture"
    mean = {n: np.mean([s[n] for s in seen if s is not None], 0) for n in ["white", *printed]}
    why = card_seen(mean, printed)
    if why:
        return None, f"the colour card does not look like its print: {why}"
    greys = tuple(sorted((n for n, c in printed.items() if len(set(c)) == 1), key=lambda n: printed[n][0]))
    return CardReference(bgr(float(c) for c in mean["white"]),
                         {n: bgr(float(c) for c in mean[n]) for n in printed}, greys), "colour card seen"
