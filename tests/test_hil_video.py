"""Hardware in the loop with video: the bets of ``video-bets`` come from its camera's video.

The recording holds no camera observation: its bets reach the engine only through
the video (OpenCV reading the file, the chip counter, stability). The replay's bets
are the script's; a copy whose video lost its frames, or went dark, or froze, gives
camera faults and no bets instead of passing silently.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_host.events import ActionTaken, Irregularity
from firmware_host.hil.recording import RecordingError, load
from firmware_host.hil.replay import Replay
from firmware_host.sim.simulate import ScriptError, simulate

HERE = Path(__file__).parent
VIDEO_BETS = HERE / "recordings" / "video-bets"
SCRIPT = HERE / "scenarios" / "video-bets.txt"
# (seat, action, total) of every chip action the script films
SCRIPTED = [(2, "raise", 1000), (1, "call", 1000), (1, "bet", 1000), (2, "raise", 2000)]


def run(path, speed=None):
    with Replay(load(path)) as replay:
        return replay.run(speed=speed)


def chip_actions(events):
    return [(e.seat, e.action, e.total) for e in events if isinstance(e, ActionTaken) and e.action != "fold"]


def camera_faults(events):
    return [e.irregularity for e in events if isinstance(e, Irregularity)
            and e.irregularity.startswith("device-fault:") and "camera" in e.procedure]


@pytest.fixture(scope="module")
def events():
    return run(VIDEO_BETS)


def test_the_recording_carries_a_video_and_no_camera_observation():
    recording = load(VIDEO_BETS)
    assert [c.name for c in recording.cameras] == ["right"]
    assert not [line for line in recording.lines if line["s"] == "camera"]
    track = recording.cameras[0]
    capture = cv2.VideoCapture(str(VIDEO_BETS / track.video))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == len(track.times) > 100
    capture.release()
    assert (VIDEO_BETS / track.video).stat().st_size < 2 * 1024 * 1024
    manifest = json.loads((VIDEO_BETS / "recording.json").read_text())
    assert manifest["cameras"] == [{"name": "right", "video": "camera-right.mp4", "frames": "camera-right.jsonl",
                                    "table": "camera-right-table.json", "chips": "camera-right-chips.json"}]


def test_the_bets_are_the_scripted_ones_read_from_the_video(events):
    assert chip_actions(events) == SCRIPTED
    assert not [e for e in events if isinstance(e, Irregularity)]


def test_the_frame_times_are_what_the_script_makes():
    made = simulate(SCRIPT.read_text())
    assert made.cameras[0].times == load(VIDEO_BETS).cameras[0].times


def _rewrite_video(path: Path, change) -> None:
    """Rewrite the recording's video at *path* with ``change(frames) -> frames``."""
    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 4, frames[0].shape[1::-1])
    for frame in change(frames):
        writer.write(frame)
    writer.release()


@pytest.mark.parametrize("damage, fault", [
    (lambda frames: frames[:20], "device-fault:no-frames"),                      # the video stops at 5 s
    (lambda frames: frames[:20] + [(f * 0.1).astype(np.uint8) for f in frames[20:]], "device-fault:lost-light"),
    (lambda frames: frames[:20] + [frames[19]] * (len(frames) - 20), "device-fault:frozen-frames"),
], ids=["truncated", "dark", "frozen"])
def test_a_damaged_video_gives_camera_faults_and_no_bets(tmp_path, damage, fault):
    copy = tmp_path / "video-bets"
    shutil.copytree(VIDEO_BETS, copy)
    _rewrite_video(copy / "camera-right.mp4", damage)
    events = run(copy)
    assert fault in camera_faults(events)
    assert chip_actions(events) == []


def test_the_same_events_at_any_speed(events):
    timed = run(VIDEO_BETS, speed=200)
    assert [e.to_json() for e in timed] == [e.to_json() for e in events]


def test_the_replay_closes_the_video():
    with Replay(load(VIDEO_BETS)) as replay:
        camera = replay.cameras["right"].camera
        assert not camera.closed
    assert camera.closed


def test_tablectl_replay_prints_the_filmed_bets():
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "replay", str(VIDEO_BETS)],
                          capture_output=True, text=True, check=False, cwd=HERE.parent)
    assert done.returncode == 0, done.stderr
    assert "seat 2 RAISE 1000" in done.stdout and "seat 1 CALL 1000" in done.stdout
    assert "seat 1 BET 1000" in done.stdout and "seat 2 RAISE 2000" in done.stdout
    assert done.stdout.strip().splitlines()[-1].endswith("20 events, 1 hands, 0 irregularities")


def test_a_saved_copy_carries_its_camera_files(tmp_path):
    recording = load(VIDEO_BETS)
    recording.save(tmp_path / "copy")
    again = load(tmp_path / "copy")
    assert again.cameras == recording.cameras and again.lines == recording.lines
    for name in ("camera-right.mp4", "camera-right-table.json", "camera-right-chips.json"):
        assert (tmp_path / "copy" / name).read_bytes() == (VIDEO_BETS / name).read_bytes()


def test_a_bad_camera_entry_is_refused_naming_the_key_or_file(tmp_path):
    copy = tmp_path / "video-bets"
    shutil.copytree(VIDEO_BETS, copy)
    (copy / "camera-right-chips.json").unlink()
    with pytest.raises(RecordingError, match=r"cameras\[0\]\.chips: no file 'camera-right-chips.json'"):
        load(copy)
    shutil.copyfile(VIDEO_BETS / "camera-right-chips.json", copy / "camera-right-chips.json")
    (copy / "camera-right.jsonl").write_text('{"frame": 0, "t": 0.0}\n{"frame": 2, "t": 0.25}\n')
    with pytest.raises(RecordingError, match=r"camera-right.jsonl:2: expected"):
        load(copy)
    manifest = json.loads((copy / "recording.json").read_text())
    manifest["cameras"][0]["video"] = "../elsewhere.mp4"
    (copy / "recording.json").write_text(json.dumps(manifest))
    with pytest.raises(RecordingError, match=r"cameras\[0\]\.video"):
        load(copy)


@pytest.mark.parametrize("script, message", [
    ("profile 004\nseat 1 A 5000\nseat 2 B 5000\nlevel 50 100\nbutton 2\nhand\ncamera right\n",
     "must come before the first hand"),
    ("profile 004\ncamera right\nseat 5 A 5000\nseat 6 B 5000\nlevel 50 100\nbutton 6\nhand\npush 5 100\n",
     "bet:5 is counted by no filmed camera"),
    ("profile 004\ncamera right\nseat 1 A 5000\nseat 2 B 5000\nlevel 50 100\nbutton 2\nhand\npush 1 25\n",
     "chips \\[25\\] have no colour"),
    ("camera middle\n", "no camera 'middle'"),
])
def test_script_errors_in_video_mode_name_the_line(script, message):
    with pytest.raises(ScriptError, match=message):
        simulate(script)
