"""Per-zone stability: per-frame counts become ChipsInZone only once a zone has held still."""
from __future__ import annotations

from enum import StrEnum

import numpy as np

from firmware_host.observations import ChipsInZone
from firmware_host.vision.results import FrameResult, ZoneCount, ZoneStatus
from firmware_host.vision.stack import INLAY_CONFIDENCE, count_confidence


class ZoneState(StrEnum):
    """Where a chip zone stands over the last frames."""

    SETTLING = "settling"  # fewer than N still frames alike so far
    STABLE = "stable"  # held still and counted with confidence: reported
    OCCLUDED = "occluded"  # motion or an arm over it in the last frame
    UNCERTAIN = "uncertain"  # held still but not counted with confidence: the dealer is asked


class Stability:
    """Per-zone stability: a zone's chips become a :class:`ChipsInZone` after N still frames.

    Still: no motion, no arm, and the same stacks (same places within ``match_mm``,
    same denominations) in each of the last N frames. The count of each stack is then
    decided on its height averaged over those N frames (a single frame's height is
    noisy at about a pixel per chip), with the same confidence rule as one frame; heights
    that disagree between frames by more than ``max_spread`` chips make the zone uncertain.
    A mixed stack counts each chip read on its side (its ``layers``), which must be the same
    in every frame and as many as the averaged height's count, or the zone is uncertain.
    ``state(zone)`` is a :class:`ZoneState` (``uncertain``: held still but not confident,
    the controller asks the dealer to confirm).
    """

    def __init__(self, frames: int = 3, match_mm: float = 8.0, min_confidence: float = 0.6,
                 max_spread: float = 0.25) -> None:
        if frames < 1:
            raise ValueError("frames must be >= 1")
        self.frames, self.match_mm, self.min_confidence = frames, match_mm, min_confidence
        self.max_spread = max_spread  # chips: how much one stack's height may vary over the held frames
        self._history: dict[str, list[ZoneCount]] = {}
        self._reported: dict[str, tuple[tuple[int, int], ...]] = {}
        self._state: dict[str, ZoneState] = {}
        self._why: dict[str, tuple[str, ...]] = {}

    def state(self, zone: str) -> ZoneState:
        return self._state.get(zone, ZoneState.SETTLING)

    def unsure(self) -> frozenset[str]:
        """The zones held still but not counted with confidence: the dealer is asked to look."""
        return frozenset(zone for zone, state in self._state.items() if state is ZoneState.UNCERTAIN)

    def why(self, zone: str) -> tuple[str, ...]:
        """Why an uncertain zone is (keys of ``counter.WHY``; ``unsteady``: its frames disagree); () otherwise."""
        return self._why.get(zone, ()) if self._state.get(zone) is ZoneState.UNCERTAIN else ()

    def hold(self) -> None:
        """Forget the frames held so far (the camera cannot be trusted for now); what was last
        reported stays, so the same chips are not reported twice."""
        self._history.clear()
        self._state.clear()

    def reported(self, zone: str) -> tuple[tuple[int, int], ...] | None:
        """The chips last reported for *zone* (None before the first report)."""
        return self._reported.get(zone)

    def _same(self, a: ZoneCount, b: ZoneCount) -> bool:
        if len(a.stacks) != len(b.stacks):
            return False
        return all(any(s.value == o.value and abs(s.x - o.x) <= self.match_mm and abs(s.y - o.y) <= self.match_mm
                       for o in b.stacks) for s in a.stacks)

    def _decide(self, frames: list[ZoneCount]) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
        """The zone's chips from N matching frames, and why a stack is not confident (nothing when
        every one is: keys of ``counter.WHY``)."""
        counts: dict[int, int] = {}
        why: dict[str, None] = {}  # (ordered, each once)
        for s in frames[-1].stacks:
            matched = [min(f.stacks, key=lambda o: abs(o.x - s.x) + abs(o.y - s.y)) for f in frames]
            if s.value is None or any(m.count == 0 for m in matched):
                return (), (next((m.why for m in (s, *matched) if m.why), "unmeasured"),)
            heights = [m.height for m in matched]
            height = float(np.mean(heights))
            count = max(1, int(round(height)))
            sigma = float(np.mean([m.sigma for m in matched]))  # a stack's misalignment stays: not averaged away
            edge = count_confidence(height, sigma)
            if all(m.inlay == count for m in matched):  # every frame's top face confirmed this count
                edge = max(edge, INLAY_CONFIDENCE)
            colour = min(m.colour_confidence for m in matched)
            # the frames disagree: something is not a plain stack (merged, half hidden); or a mixed stack's
            # chips, read on its side, are not the same in every frame or at this height
            if (len(heights) > 1 and float(np.std(heights)) > self.max_spread
                    or len({m.layers for m in matched}) > 1 or s.layers and len(s.layers) != count):
                why["unsteady"] = None
            elif min(edge, colour) < self.min_confidence:  # as a frame said, else as the averaged height says
                why[next(w for w in (*(m.why for m in matched), "colour" if colour < edge else "height") if w)] = None
            for value in s.layers or (s.value,) * count:  # a mixed stack: each chip's own value
                counts[value] = counts.get(value, 0) + 1
        return tuple(sorted(counts.items(), reverse=True)), tuple(why)

    def feed(self, t: float, result: FrameResult) -> list[ChipsInZone]:
        out = []
        for name, zc in result.zones.items():
            if zc.motion or zc.status == ZoneStatus.OCCLUDED:
                self._history[name] = []
                self._state[name] = ZoneState.OCCLUDED
                continue
            if zc.status == ZoneStatus.UNCERTAIN and not zc.stacks:  # nothing read (a light the models do not
                self._history[name] = []  # know): not an empty zone
                self._state[name], self._why[name] = ZoneState.UNCERTAIN, zc.why
                continue
            history = self._history.setdefault(name, [])
            if history and not self._same(history[-1], zc):
                history.clear()
            history.append(zc)
            del history[:-self.frames]
            if len(history) < self.frames:
                self._state[name] = ZoneState.SETTLING
                continue
            chips, why = self._decide(history)
            if why:
                self._state[name], self._why[name] = ZoneState.UNCERTAIN, why
                continue
            self._state[name] = ZoneState.STABLE
            if self._reported.get(name) != chips:
                self._reported[name] = chips
                out.append(ChipsInZone(t, name, sum(v * n for v, n in chips), chips))
        return out
