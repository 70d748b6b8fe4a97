"""Small array helpers of the vision pipeline, where numpy's or OpenCV's own are slow for its shapes: the
median of the small arrays of a stack's columns, strided crops of 3-byte pixels, blobs labelled in 16
bits; and a colour as a triple."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import cv2
import numpy as np

__all__ = ["bgr", "components", "every", "median"]


def median(a: np.ndarray, axis: int | None = None) -> Any:
    """``np.median`` without its overhead, which is most of its cost on the small arrays of a
    stack's columns (same result for finite values)."""
    a = np.sort(np.asarray(a).ravel() if axis is None else a, axis=0 if axis is None else axis)
    n = a.shape[0 if axis is None else axis]
    axis = 0 if axis is None else axis
    lo, hi = np.take(a, (n - 1) // 2, axis=axis), np.take(a, n // 2, axis=axis)
    return (np.add(lo, hi, dtype=np.float64) if a.dtype.kind in "iub" else lo + hi) / 2


def every(image: np.ndarray, step: int) -> np.ndarray:
    """Every *step*-th row and column of a colour *image* (as ``image[::step, ::step]``), contiguous: copied
    channel by channel, several times faster than numpy's copy of 3-byte pixels."""
    out = np.empty(((image.shape[0] + step - 1) // step, (image.shape[1] + step - 1) // step, image.shape[2]),
                   image.dtype)
    for c in range(image.shape[2]):
        out[..., c] = image[::step, ::step, c]
    return out


def components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """8-connected blobs of a uint8 mask with their stats. Labels are 16-bit (2.5 times faster here):
    after a 3x3 opening a blob has at least 9 pixels, so a mask under 589,815 pixels cannot overflow."""
    ltype = cv2.CV_16U if mask.size < 65535 * 9 else cv2.CV_32S
    return cv2.connectedComponentsWithStatsWithAlgorithm(mask, 8, ltype, cv2.CCL_DEFAULT)


def bgr(channels: Iterable[float]) -> tuple[float, float, float]:
    """A colour's three channels as a triple."""
    b, g, r = channels
    return b, g, r
