"""Cards face up in the seats' card areas, reported once they have lain still."""
from __future__ import annotations

from firmware_host.observations import CardExposed
from firmware_host.vision.results import FrameResult


class FaceUp:
    """Cards face up in the seats' card areas, from the counted frames (stable before trusted).

    A seat's area holding a card face up for *frames* still frames gives one :class:`CardExposed`
    (no card named: the camera cannot tell which); the next one only after the area was seen
    without a face-up card for as many still frames. Frames with motion over the area (a hand
    turning or protecting the cards) count for neither. The deck and board areas are not
    reported: the shoe's sensor tells a card face up in the deck, and board cards lie face up.
    """

    def __init__(self, frames: int = 3) -> None:
        if frames < 1:
            raise ValueError("frames must be >= 1")
        self.frames = frames
        self._up: set[str] = set()  # seats reported face up, not yet seen otherwise
        self._run: dict[str, int] = {}  # still frames in a row that disagree with the above

    def feed(self, t: float, result: FrameResult) -> list[CardExposed]:
        out = []
        for name, seen in result.cards.items():
            if not name.startswith("seat:") or seen.motion:
                continue
            up = seen.present and seen.face_up
            if up == (name in self._up):
                self._run[name] = 0
                continue
            self._run[name] = self._run.get(name, 0) + 1
            if self._run[name] < self.frames:
                continue
            self._run[name] = 0
            if up:
                self._up.add(name)
                out.append(CardExposed(t, name))
            else:
                self._up.discard(name)
        return out
