"""Colour under a change of light: a correction fitted per frame on the camera's colour card.

Dividing by the white patch cancels a light that only scales each colour channel. A real
change of light does more: a camera's tone curve and the flare of a dim scene bend the
greys, and a warm lamp moves colours across channels. Each camera has a colour card on the
felt beside its white patch (``[[cameras.patches]]`` in the layout: greys and colours). Chip
calibration records what the card and the white patch look like under the calibration's
light (:class:`CardReference`); each frame then maps its own colours back to that light:

1. per channel, a tone curve through the greys and the white (and black at 0): a lookup
   table, so a bent or offset response is straightened;
2. then a 3 x 3 matrix, fitted by least squares on every patch (pulled towards the identity),
   for what moves across channels.

Everything the counter reads is then in the calibration's light, where the chip models hold.
How well the card fits after the correction (:attr:`Correction.residual`) and how far the
light has moved (:attr:`Correction.gain`, :attr:`Correction.cast_deg`) tell when the light
has left what one calibration can cover: :meth:`Correction.relit` (the camera's ``relit``
fault; the zones are then uncertain, never read in a light the models do not know).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import cv2
import numpy as np

__all__ = ["CardReference", "Correction", "card_seen", "fit"]

RESIDUAL_MAX = 0.025  # the card's RMS error after the correction, share of the white's level (measured: 0.1-2 % under
# the renderer's usual, warm-dim and tone-curve lights; 3-5 % with a spot across the card or a harsh lamp)
CAST_MAX_DEG = 15.0  # how far (degrees) the white's colour may move from the calibration's
UNEVEN_MAX = 0.04  # a card fitted to RESIDUAL_MAX-UNEVEN_MAX under a light within UNEVEN_CAST_DEG of the calibration's
UNEVEN_CAST_DEG = 6.0  # colour is lit unevenly (a spot across it): the frame is read through the white patch alone
GAIN_RANGE = (0.3, 3.0)  # how far the light's level may move (frame white / calibration white)
RIDGE = 0.05  # pull of the matrix towards the identity (in units of the patches' squared level)
SATURATED = 250.0  # a patch channel this bright has clipped: its level says nothing


@dataclass(frozen=True)
class CardReference:
    """The white patch and the colour card (name -> BGR) as the calibration pictures showed them."""

    white: tuple[float, float, float]
    patches: dict[str, tuple[float, float, float]]
    greys: tuple[str, ...]  # the card's grey patches, darkest first

    def to_dict(self) -> dict:
        return {"white": list(self.white), "patches": {n: list(c) for n, c in self.patches.items()},
                "greys": list(self.greys)}

    @classmethod
    def from_dict(cls, data: dict) -> CardReference:
        return cls(_triple(data["white"]), {n: _triple(c) for n, c in data["patches"].items()},
                   tuple(data["greys"]))


@dataclass(frozen=True)
class Correction:
    """One frame's colour correction towards the calibration's light."""

    lut: np.ndarray  # 256 x 1 x 3 uint8: each channel's tone curve
    matrix: np.ndarray  # 3 x 3, applied after the tone curves
    residual: float  # the card's RMS error after the correction, share of the white's level
    gain: float  # the light's level against the calibration's
    cast_deg: float  # the angle between the white's colour now and at calibration
    scale: float = 1.0  # the corrected picture's level against the calibration's (headroom for glare)
    mixes: bool = field(init=False, repr=False, compare=False)  # whether the matrix mixes channels at all

    def __post_init__(self) -> None:
        object.__setattr__(self, "mixes", not np.allclose(self.matrix, np.eye(3), atol=1e-3))

    def white(self, reference: CardReference) -> np.ndarray:
        """The white patch's colour in the corrected picture."""
        return self.scale * np.array(reference.white, np.float32)

    def relit(self) -> str | None:
        """Why this light is beyond what the calibration covers (None: it is not)."""
        if not GAIN_RANGE[0] <= self.gain <= GAIN_RANGE[1]:
            return f"light level x{self.gain:.2f} of the calibration's (beyond {GAIN_RANGE[0]}-{GAIN_RANGE[1]})"
        if self.cast_deg > CAST_MAX_DEG:
            return f"light colour {self.cast_deg:.0f} degrees from the calibration's (over {CAST_MAX_DEG:.0f})"
        if self.residual > RESIDUAL_MAX and not self.uneven():
            return (f"the colour card fits the calibration's light only to {self.residual:.1%} "
                    f"(over {RESIDUAL_MAX:.1%})")
        return None

    def uneven(self) -> bool:
        """Whether the card fits badly only because it is lit unevenly (a spot across it) under a light
        of the calibration's colour and level: no correction to trust, the white patch alone will do."""
        return (RESIDUAL_MAX < self.residual <= UNEVEN_MAX and self.cast_deg <= UNEVEN_CAST_DEG
                and GAIN_RANGE[0] <= self.gain <= GAIN_RANGE[1])

    def apply(self, crop: np.ndarray) -> np.ndarray:
        """*crop* (BGR uint8) as it would look under the calibration's light."""
        out: np.ndarray = cv2.LUT(crop, self.lut)
        if self.mixes:
            out = cv2.transform(out, self.matrix)
        return out


def card_seen(reference: Mapping[str, np.ndarray], printed: Mapping[str, tuple[int, int, int]]) -> str | None:
    """Whether the patches measured in a calibration picture (BGR) look like the printed card
    (*printed*: name -> sRGB): its greys in the order of their print in every channel and
    under the white, each colour patch brightest in the channel its print is. None if they
    do; else what does not (a card hidden, missing or out of its place)."""
    white = reference["white"]
    greys = sorted((n for n, c in printed.items() if len(set(c)) == 1), key=lambda n: printed[n][0])
    if len(greys) < 2:
        return "the colour card needs at least two grey patches"
    levels = [reference[n] for n in greys] + [white]
    for lower, upper, name in zip(levels, levels[1:], greys[1:] + ["white"]):
        if not (upper > lower * 1.1).all():
            return f"patch {name} is not brighter than the grey before it in every channel"
    for name, srgb in printed.items():
        if name in greys:
            continue
        bgr = np.array(srgb[::-1], float)
        seen = np.asarray(reference[name], float) / np.maximum(white, 1.0)
        if int(np.argmax(seen)) != int(np.argmax(bgr)):
            return f"patch {name} does not show its printed colour"
    return None


def fit(measured: Mapping[str, np.ndarray], reference: CardReference) -> Correction:
    """The correction taking the colours *measured* in a frame (name -> BGR, with ``white``)
    to the *reference*'s."""
    names = list(reference.patches) + ["white"]
    ref = np.array([reference.patches[n] for n in reference.greys] + [reference.white], np.float64)
    got = np.array([measured[n] for n in reference.greys] + [measured["white"]], np.float64)
    curves = np.empty((256, 3))
    levels = np.arange(256, dtype=np.float64)
    monotone = True
    for c in range(3):
        keep = got[:, c] < SATURATED
        x, y = got[keep, c], ref[keep, c]
        order = np.argsort(x)
        x, y = x[order], y[order]
        monotone = monotone and len(x) >= 2 and bool((np.diff(x) > 0).all() and (np.diff(y) > 0).all())
        if not monotone:
            break
        curve = np.interp(levels, x, y)
        low, high = (y[1] - y[0]) / (x[1] - x[0]), (y[-1] - y[-2]) / (x[-1] - x[-2])
        curve = np.where(levels < x[0], y[0] + low * (levels - x[0]), curve)  # under the darkest grey: its
        curve = np.where(levels > x[-1], y[-1] + high * (levels - x[-1]), curve)  # segment on; over the white too
        curves[:, c] = curve
    if not monotone:  # greys out of order or clipped: no correction can be trusted
        return Correction(np.arange(256, dtype=np.uint8).reshape(256, 1, 1).repeat(3, 2), np.eye(3, dtype=np.float32),
                          1.0, _gain(measured, reference), 180.0)
    src = np.array([measured[n] for n in names], np.float64)
    dst = np.array([reference.patches[n] for n in names[:-1]] + [reference.white], np.float64)
    toned = curves[np.clip(np.round(src), 0, 255).astype(int), np.arange(3)]
    lam = RIDGE * float((dst ** 2).sum() / len(dst))
    matrix = np.linalg.solve(toned.T @ toned + lam * np.eye(3), toned.T @ dst + lam * np.eye(3)).T
    corrected = toned @ matrix.T
    if float(np.linalg.norm(corrected - dst)) >= float(np.linalg.norm(toned - dst)):
        matrix, corrected = np.eye(3), toned  # the matrix does not help: tone curves only
    # headroom: the brightest level of the frame (glare) must not clip where the calibration's light is
    # brighter; a scale k <= 1 on everything (and on the reference white) keeps it, and cancels out
    scale = min(1.0, 255.0 / max(float((matrix @ curves[255]).max()), 1.0))
    lut = np.clip(np.round(scale * curves), 0, 255).astype(np.uint8).reshape(256, 1, 3)
    level = float(np.mean(reference.white))
    residual = float(np.sqrt(((corrected - dst) ** 2).mean())) / max(level, 1.0)
    white, white_ref = np.asarray(measured["white"], np.float64), np.asarray(reference.white, np.float64)
    gain = _gain(measured, reference)
    norms = float(np.linalg.norm(white) * np.linalg.norm(white_ref))
    cosine = float(white @ white_ref) / max(norms, 1e-9)
    cast = float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))
    return Correction(lut, matrix.astype(np.float32), residual, gain, cast, scale)


def _gain(measured: Mapping[str, np.ndarray], reference: CardReference) -> float:
    return float(np.mean(measured["white"]) / max(float(np.mean(reference.white)), 1.0))


def _triple(values: object) -> tuple[float, float, float]:
    b, g, r = (float(v) for v in values)  # type: ignore[attr-defined]
    return b, g, r
