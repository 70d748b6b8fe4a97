"""What the chip cameras saw in one frame: each stack, each chip zone, each card area (the counter's
results: ``ChipCounter.count`` makes them, ``Stability`` and the service read them)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["MIN_CONFIDENCE", "UNCOUNTED", "WHY", "CardSeen", "FrameResult", "StackSeen", "ZoneCount", "ZoneStatus"]

MIN_CONFIDENCE = 0.5  # a count given with less is uncertain


@dataclass(frozen=True)
class StackSeen:
    """One stack: its base (mm), denomination (None if unknown), chip count and confidence."""

    x: float
    y: float
    value: int | None
    count: int
    confidence: float
    colour: tuple[float, float, float] | None = None  # median normalised colour of the top face
    excess_px: float = 0.0  # measured silhouette minus that of a single chip (calibrates the edge bias)
    height: float = 0.0  # the count before rounding (chips)
    colour_confidence: float = 0.0
    sigma: float = 0.125  # the height's standard uncertainty (chips); this default gives confidence 1 - 2|error|
    inlay: int | None = None  # the count the top face's centre confirmed, when the height alone was not enough
    layers: tuple[int, ...] = ()  # a mixed stack: each chip's value bottom to top, read on its side
    why: str = ""  # not counted with confidence: the reason (a key of ``WHY``)

    @property
    def chips(self) -> tuple[int, ...]:
        """Each chip's value bottom to top (empty when the denomination is unknown)."""
        return self.layers or ((self.value,) * self.count if self.value is not None else ())


UNCOUNTED = ("unmeasured", "blob", "edge")  # reasons of a stack seen standing, its height not read

WHY = {  # why a stack or a zone is not counted with confidence (``StackSeen.why``, ``ZoneCount.why``)
    "colour": "a top face's denomination not read with confidence (a look-alike, the felt's colour, a weak light)",
    "height": "a stack's height between two counts",
    "side": "chips of another denomination under a top, not read one by one (a mixed stack, a look-alike's side)",
    "outline": "more than one stack's outline (a stack or a card behind it, a chip under its base)",
    "unmeasured": "a stack's edges not found (its face too small, a column without an edge, a card like it)",
    "blob": "not one stack's width: stacks touching, a card, a finger",
    "edge": "a stack on the zone's edge: whose chips they are is the dealer's call",
    "specks": "a chip seen only in pieces",
    "unseen": "the felt changed beyond the stacks read (a denomination that looks like the felt, or a grey chip "
              "on a neutral felt)",
    "behind": "a chip could lie wholly hidden behind a stack",
    "view": "part of the zone lies out of the camera's picture: a stack there is not seen whole (aim the camera "
            "so that it sees the zone whole, then calibrate the table again)",
    "light": "the zone lit otherwise than at calibration",
    "relit": "a light the calibration does not cover (the whole camera)",
    "unsteady": "a stack's height or chips differ from frame to frame (Stability)",
}


class ZoneStatus(StrEnum):
    """How a chip zone was read in one frame."""

    OK = "ok"  # every stack counted with confidence
    OCCLUDED = "occluded"  # an arm or a hand over it, or the reference patch covered: nothing read
    UNCERTAIN = "uncertain"  # a stack not counted with confidence: never a guess


@dataclass(frozen=True)
class ZoneCount:
    """A chip zone in one frame: how it was read; what it holds; motion."""

    zone: str
    status: ZoneStatus
    amount: int
    chips: tuple[tuple[int, int], ...]
    stacks: tuple[StackSeen, ...]
    confidence: float
    motion: bool
    why: tuple[str, ...] = ()  # uncertain: each reason once (keys of ``WHY``), in its stacks' order
    witnessed: bool = False  # where a chip could hide behind its stacks, another camera's picture shows bare felt

    @property
    def behind(self) -> bool:
        """Uncertain only because a chip could lie wholly hidden behind a stack (the dealer spreads it): that
        check runs only when every stack was counted with confidence."""
        return "behind" in self.why


@dataclass(frozen=True)
class CardSeen:
    """A card area in one frame: a card present, face up or not."""

    zone: str
    present: bool
    face_up: bool
    motion: bool


@dataclass(frozen=True)
class FrameResult:
    zones: dict[str, ZoneCount]
    cards: dict[str, CardSeen]
    white: tuple[float, float, float]
    relit: str | None = None  # why the light is beyond the calibration's (then every chip zone is uncertain)
