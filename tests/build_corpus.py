"""(Re)build the HIL corpus: a recording per scenario script, and Pluribus sessions.

    python tests/build_corpus.py            # every recording and its expected events

Each recording directory gets ``expected-events.jsonl``, the events its replay
gives now. Review the diff (git diff) before committing a changed expectation.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from firmware_host.events import HandEnded  # noqa: E402
from firmware_host.hil.phh import load, script  # noqa: E402
from firmware_host.hil.replay import replay  # noqa: E402
from firmware_host.sim.simulate import simulate  # noqa: E402

SCENARIOS = HERE / "scenarios"
RECORDINGS = HERE / "recordings"
PLURIBUS = HERE / "data" / "pluribus.phhs.gz"
SESSIONS, HANDS_PER_SESSION = 6, 50          # 300 real hands


def write(name: str, recording, extra: dict | None = None) -> None:
    path = recording.save(RECORDINGS / name)
    events = replay(recording)
    (path / "expected-events.jsonl").write_text("".join(e.to_json() + "\n" for e in events))
    if extra:
        (path / "record.json").write_text(json.dumps(extra, indent=1) + "\n")
    hands = sum(isinstance(e, HandEnded) for e in events)
    print(f"{name}: {len(recording.lines)} lines, {len(events)} events, {hands} hands")


def main() -> None:
    if RECORDINGS.exists():
        shutil.rmtree(RECORDINGS)
    for path in sorted(SCENARIOS.glob("*.txt")):
        write(path.stem, simulate(path.read_text()))
    hands = load(PLURIBUS)
    for k in range(SESSIONS):
        chunk = range(k * HANDS_PER_SESSION, (k + 1) * HANDS_PER_SESSION)
        text = "".join(script(hands[n]) for n in chunk)
        recording = simulate(text, table="pluribus")
        recording.chip_unit = 1
        recording.notes = f"Pluribus hands {chunk.start + 1}-{chunk.stop} of ../shared/phh/pluribus.phhs"
        write(f"pluribus-{k + 1:02d}", recording,
              {"hands": [n + 1 for n in chunk],
               "finishing_stacks": [[float(x) for x in hands[n].finishing_stacks] for n in chunk]})


if __name__ == "__main__":
    main()
