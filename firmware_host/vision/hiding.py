"""A chip wholly hidden behind stacks: where one could lie in a chip zone that no picture from this camera
shows (then the zone is uncertain, ``behind``: the dealer spreads the stacks). Pure geometry of the stacks
counted (``StackSeen``) through the camera's :class:`StackProjection`; millimetres on the table.

From 400 mm up a stack hides the felt behind it, about four times its height: for a stack of N chips
(thickness t, radius r) whose centre is D mm from the camera's foot, the camera Z mm up, a chip touching
it right behind shows no pixel when (N t - t)(D + r) >= 2 r (Z - N t); one showing a band over its top
thinner than the outline the counter widens for the blur (``OUTLINE_BLUR_PX``) is seen by no test, and is
taken as hidden too. docs/vision.md, "A chip wholly hidden behind a stack", has the measurements.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

import cv2
import numpy as np

from firmware_host.vision.projection import StackProjection, ZoneRoi
from firmware_host.vision.results import UNCOUNTED, StackSeen, ZoneCount, ZoneStatus
from firmware_host.vision.stack import OUTLINE_BLUR_PX
from firmware_host.vision.witness import Witness

__all__ = ["EDGE_SLACK", "HIDDEN_SLACK", "behind", "hidden_spot", "hidden_spots"]

HIDDEN_SLACK = 2.0  # mm two stacks' measured centres may come closer than a diameter (where they stand is measured)
EDGE_SLACK = 2.0  # mm beyond the zone's edge a hidden chip's centre may lie and be the zone's (as measured; the zone's
# pixels alone missed one 1 mm inside its far edge, wholly hidden: 2 x 2000 behind 6 x 1000, read 6700 for 10700)


def behind(geo: StackProjection, rois: Iterable[ZoneRoi], zones: dict[str, ZoneCount], tallest: int,
           witnesses: Sequence[Witness] = ()) -> None:
    """Each zone counted with confidence where a chip could lie wholly hidden behind its stacks, or those
    of the camera's other zones (a tall stack at the back of bet:1 hides the front of bet:2 from the right
    camera; at 19-20 chips on the shipped layout), is made uncertain (``behind``), in *zones*: no picture
    from here shows it, unless one of the *witnesses* (other cameras' pictures of the same moment) shows
    every such place bare (``ZoneCount.witnessed``). Another zone's stack not counted (its edges not found,
    stacks touching, on its zone's edge) is taken as tall as a stack can be."""
    standing = {name: [s if s.count > 0 else dataclasses.replace(s, count=tallest) for s in z.stacks
                       if s.count > 0 or s.why in UNCOUNTED] for name, z in zones.items()}
    for roi in rois:
        zone = zones.get(roi.zone.name)
        if zone is None or zone.status != ZoneStatus.OK:
            continue
        others = [s for name, stacks in standing.items() if name != roi.zone.name for s in stacks
                  if -roi.zone.inside(s.x, s.y) <= geo.shadow(s.x, s.y, s.count) + 3 * geo.r]
        near = [s for s in zone.stacks if s.count > 0] + others
        if witnesses:  # every place, the first as hidden_spot finds it
            spots = hidden_spots(geo, roi, near)
            spot = (float(spots[0, 0]), float(spots[0, 1])) if len(spots) else None
            if spot is not None and any(w.clear(spots, near) for w in witnesses):
                zones[roi.zone.name] = dataclasses.replace(zone, witnessed=True)
                continue
        else:
            spot = hidden_spot(geo, roi, near)
        if spot is not None:
            zones[roi.zone.name] = dataclasses.replace(
                zone, status=ZoneStatus.UNCERTAIN, confidence=min(zone.confidence, 0.2), why=("behind",),
                stacks=zone.stacks + (StackSeen(*spot, None, 0, 0.2, why="behind"),))


def hidden_spot(geo: StackProjection, roi: ZoneRoi, stacks: Sequence[StackSeen]) -> tuple[float, float] | None:
    """Where (table mm) a single chip could lie in the zone wholly hidden behind its *stacks* in this
    camera's view (its outline within theirs), its centre in the zone (or ``EDGE_SLACK`` beyond its edge) and
    clear of their footprints;
    or None. First right behind each stack, touching it (its height tells); then behind each stack
    tall enough, from the nearest: the union of its outline and those of the stacks nearer the
    camera, eroded by one chip's outline a diameter behind it (the nearest a chip can lie; further
    ones look smaller, so they hide there too)."""
    spot = next(_hidden(geo, roi, stacks), None)
    return None if spot is None else (float(spot[0, 0]), float(spot[0, 1]))


def hidden_spots(geo: StackProjection, roi: ZoneRoi, stacks: Sequence[StackSeen]) -> np.ndarray:
    """Every place (table mm, k x 2; a pixel's centre apart; :func:`hidden_spot`'s first) where a chip could
    lie wholly hidden: what another camera must show bare for the zone to be counted (``vision.witness``)."""
    found = list(_hidden(geo, roi, stacks))
    return np.vstack(found) if found else np.zeros((0, 2))


def _hidden(geo: StackProjection, roi: ZoneRoi, stacks: Sequence[StackSeen]) -> Iterator[np.ndarray]:
    """The spots of :func:`hidden_spot`, in its order (each k x 2, the best first)."""
    counted = [s for s in stacks if s.count > 0]
    if not counted:
        return
    at = np.array([(s.x, s.y) for s in counted])
    far = np.linalg.norm(at - geo.cam_xy, axis=1)
    heights = np.array([s.count for s in counted]) * geo.t

    def over(top: np.ndarray, further: float) -> np.ndarray:
        """Whether the line from the camera over each stack's top passes over a point *further* mm
        further on and *top* mm lower than that top."""
        return top * (far + geo.r) >= further * np.maximum(geo.cam_z - heights, 1.0)

    def clear(spots: np.ndarray) -> np.ndarray:  # clear of every stack's footprint
        return np.linalg.norm(spots[:, None, :] - at[None, :, :], axis=2).min(1) >= 2 * geo.r - HIDDEN_SLACK

    # a chip touching a stack right behind it hides when the line over the stack's top passes over the
    # chip's top; here over the felt (the chip's own thickness left as slack)
    can = over(heights, 2 * geo.r - HIDDEN_SLACK)
    if not can.any():
        return
    order = np.argsort(far)
    # right behind a stack, touching it, in the vertical plane through the camera: hidden by that stack alone
    # when the line over its top passes over the chip's, or under it by less than OUTLINE_BLUR_PX (a band
    # that thin over the top lies within the outline the counter widens for the blur: seen by no test, read
    # as the stack's own top or missed; the chip looks smaller; its top's ends may show by a pixel, as a chip
    # 4-8 mm aside goes unseen: taken as hidden)
    ahead = at + 2 * geo.r * (at - geo.cam_xy) / far[:, None]
    edge = far + 3 * geo.r  # the chip's far edge, where a pixel spans this many mm of height:
    band = OUTLINE_BLUR_PX * (edge ** 2 + (geo.cam_z - geo.t) ** 2) / (float(geo.cam.K[0, 0]) * edge)
    for i in order[(over(heights - geo.t + band, 2 * geo.r) & clear(ahead))[order]]:
        if roi.zone.inside(*ahead[i]) >= -EDGE_SLACK:
            yield ahead[i:i + 1]
    # elsewhere (further, aside, behind several): where the outline of a chip fits in theirs, each widened for
    # the blur as the counter's outline test widens it (what shows of a chip within them, no test sees)
    outlines = [np.round(geo.outline(s.x, s.y, s.count, OUTLINE_BLUR_PX) - (roi.x0, roi.y0)).astype(np.int32)
                .reshape(-1, 1, 2) for s in counted]
    for i in order[can[order]]:
        front = [outlines[j] for j in np.flatnonzero(far <= far[i])]
        x0, y0 = np.maximum(np.min([o.min((0, 1)) for o in front], 0), 0)
        x1, y1 = np.minimum(np.max([o.max((0, 1)) for o in front], 0) + 1, roi.mask.shape[::-1])
        if x1 <= x0 or y1 <= y0:  # (stacks of another zone, all beside this one's box)
            continue
        union = np.zeros((y1 - y0, x1 - x0), np.uint8)
        for o in front:
            cv2.fillConvexPoly(union, o - (x0, y0), 1)
        kernel, anchor = geo.chip_kernel(ahead[i])
        v, u = np.nonzero(cv2.erode(union, kernel, anchor=anchor, borderValue=0))  # the centres of chips the
        if not len(u):  # stacks cover whole
            continue
        px = np.column_stack([u + x0 + roi.x0, v + y0 + roi.y0]).astype(np.float64)
        spots = geo.cam.to_table(px)
        k = np.flatnonzero(clear(spots) & (np.linalg.norm(spots - geo.cam_xy, axis=1) > far[i]))
        k = k[[roi.zone.inside(*spots[j]) >= -EDGE_SLACK for j in k]]
        if len(k):  # the nearest such spot to the stack first
            yield spots[k[np.argsort(np.linalg.norm(spots[k] - at[i], axis=1))]]
