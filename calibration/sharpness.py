"""How sharp a camera is: its blur (the sigma of a Gaussian, px) measured on the markers' outer edges.

A marker's black border meets the white around it in a straight step; the picture shows it spread by
the lens, the focus, the sensor and the JPEG. Across each side, at five places along its middle, the
profile from black to white is sampled every quarter pixel: a Gaussian blur of sigma puts its 25 % and
75 % points 1.349 sigma apart. The camera's blur is the median over every side of every marker seen.
"""
from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np

__all__ = ["edge_blurs", "marker_blur"]

IQR_SIGMAS = 1.349  # a Gaussian's 25-75 % spread, in sigmas
REACH_PX = 5.0  # px sampled on either side of an edge
MIN_STEP = 30.0  # grey levels between a marker's black and the white round it: less is no clear edge
_ACROSS = np.arange(-REACH_PX, REACH_PX + 0.01, 0.25)
_ALONG = np.linspace(0.3, 0.7, 5)
_ENDS = 8  # samples at either end that give the black's and the white's levels


def edge_blurs(gray: np.ndarray, corners: np.ndarray) -> list[float]:
    """The blur (sigma, px) across each side of one marker (its 4 x 2 *corners* in *gray*), where the
    profile is a clean rising step (a stack, a glint or the picture's edge in the way gives none)."""
    centre = corners.mean(0)
    out = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        t = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
        normal = np.array([-t[1], t[0]])
        if np.dot(normal, (a + b) / 2 - centre) < 0:
            normal = -normal  # outwards: black to white
        points = (a + (b - a) * _ALONG[:, None])[:, None, :] + _ACROSS[None, :, None] * normal
        profiles = cv2.remap(gray, points[..., 0].astype(np.float32), points[..., 1].astype(np.float32),
                             cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=-1).astype(np.float64)
        for profile in profiles:
            sigma = _step_sigma(profile)
            if sigma is not None:
                out.append(sigma)
    return out


def _step_sigma(profile: np.ndarray) -> float | None:
    """The sigma of one black-to-white *profile* (quarter-pixel steps), or None when it is no clean step."""
    if (profile < 0).any():
        return None
    low, high = np.median(profile[:_ENDS]), np.median(profile[-_ENDS:])
    if high - low < MIN_STEP:
        return None
    level = (profile - low) / (high - low)
    if (np.diff(level[_ENDS // 2:-_ENDS // 2]) < -0.08).any():  # not rising all the way: not one edge
        return None
    i25, i75 = int(np.argmax(level >= 0.25)), int(np.argmax(level >= 0.75))
    if i25 == 0 or i75 == 0:
        return None
    x25, x75 = (float(np.interp(q, level[i - 1:i + 1], _ACROSS[i - 1:i + 1])) for q, i in ((0.25, i25), (0.75, i75)))
    return (x75 - x25) / IQR_SIGMAS


def marker_blur(pictures: Iterable[tuple[np.ndarray, Iterable[np.ndarray]]]) -> float | None:
    """The camera's blur (sigma, px): the median of :func:`edge_blurs` over every marker's *corners* in
    each of its pictures (BGR or grey); None when no side gave a clean step."""
    blurs: list[float] = []
    for picture, markers in pictures:
        gray = picture if picture.ndim == 2 else cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY)
        for corners in markers:
            blurs += edge_blurs(gray, np.asarray(corners, np.float64).reshape(4, 2))
    return float(np.median(blurs)) if blurs else None
