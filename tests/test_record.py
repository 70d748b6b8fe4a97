"""`record`: the real drivers' raw streams (a simulated shoe on a pty, emulated MFRC522s, a mock
console) recorded, then replayed: the replay makes the observations the live drivers made."""
import os
import threading
import time
import tomllib
from pathlib import Path

from gpiozero.pins.mock import MockFactory

from calibration.deck import Registry
from calibration.readers import parse_readers
from drivers.console import load_console_pins
from drivers.emulated.mfrc522 import VirtualClock
from drivers.emulated.shoe import SimShoe
from drivers.zones import open_emulated
from firmware_host.hil.recording import load
from firmware_host.hil.replay import Replay
from firmware_host.observations import CardEntered, ConsolePress
from firmware_host.service.devices import record_session
from firmware_host.service.recorder import Recorder
from firmware_host.sim.simulate import demo_deck

TABLE = Path(__file__).parents[1] / "hardware" / "tables" / "demo-10.toml"


def test_recorded_session_replays_to_the_same_observations(tmp_path):
    text = TABLE.read_text()
    table = tomllib.loads(text)
    readers = parse_readers(table, TABLE.name)
    deck = demo_deck("blue", "blue")
    registry = Registry([deck])
    recorder = Recorder("t-rec", "000", text, [{"deck": "blue", "back": "blue", "cards": dict(deck.cards)}], "blue")
    chips, emulators = open_emulated(readers, VirtualClock())
    factory = MockFactory()
    master, slave = os.openpty()
    done = threading.Event()
    with SimShoe(master) as shoe:
        def table_life():
            time.sleep(0.3)
            for card, zone in (("As", "seat:1"), ("Kd", "seat:2")):
                shoe.draw(deck.cards[card], face="down")
                shoe.wait_acked()
                emulators[zone].place(deck.cards[card])
                time.sleep(0.3)
            factory.pin(6).drive_low()
            factory.pin(6).drive_high()
            time.sleep(0.3)
            emulators["seat:2"].remove(deck.cards["Kd"])
            time.sleep(0.5)
            done.set()
        life = threading.Thread(target=table_life)
        life.start()
        live = record_session(recorder, shoe_port=os.ttyname(slave), registry=registry, readers=readers,
                              chips=chips, console_pins=load_console_pins(table, TABLE.name),
                              stop=done.is_set, pin_factory=factory)
        life.join()
    os.close(slave)
    path = recorder.recording().save(tmp_path / "rec")
    recording = load(path)
    assert {"shoe", "reader", "gpio"} <= {line["s"] for line in recording.lines}
    with Replay(recording) as replay:
        replayed = [obs for line in recording.lines for obs in replay.observations(line)]

    def cards(observations):     # by time: live, the drivers' threads deliver in arrival order
        return sorted(((type(o).__name__, getattr(o, "zone", None), getattr(o, "card", None), round(o.t, 6))
                       for o in observations
                       if isinstance(o, (CardEntered, ConsolePress)) or type(o).__name__ == "CardLeft"),
                      key=lambda c: c[3])
    assert cards(replayed) == cards(live)
    assert [c[:3] for c in cards(live)] == [
        ("CardEntered", "shoe", "As"), ("CardEntered", "seat:1", "As"), ("CardEntered", "shoe", "Kd"),
        ("CardEntered", "seat:2", "Kd"), ("ConsolePress", None, None), ("CardLeft", "seat:2", "Kd")]


def test_tablectl_record_off_the_pi_says_what_is_missing(tmp_path):
    import subprocess
    import sys
    demo_deck("blue", "blue").save(tmp_path / "decks")
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "record", str(tmp_path / "out"),
                           "--decks", str(tmp_path / "decks"), "--seconds", "1"], capture_output=True, text=True)
    assert done.returncode == 2 and "zone readers cannot be opened" in done.stderr and "spidev" in done.stderr
    done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "record", str(tmp_path / "out"),
                           "--decks", str(tmp_path / "none")], capture_output=True, text=True)
    assert done.returncode == 2 and "no registered deck" in done.stderr


def test_replay_publishes_for_real_with_broker_url(tmp_path):
    """`tablectl replay --broker mqtt://...`: the events arrive at a subscriber of the public topic."""
    import subprocess
    import sys

    from firmware_host.mqtt.subscriber import Subscriber
    from firmware_host.sim.broker import LocalMosquitto

    topic = "pokerhall/v1/table/demo-1/event"
    with LocalMosquitto(tmp_path) as broker, Subscriber(broker.port, [topic], client_id="hil-viewer") as viewer:
        def kinds(subscriber):
            return [payload["event"]["kind"] for payload in subscriber.payloads(topic)]
        recording = Path(__file__).parent / "recordings" / "normal-fold-preflop"
        done = subprocess.run([sys.executable, "-m", "firmware_host.cli", "replay", str(recording), "--quiet",
                               "--broker", f"mqtt://127.0.0.1:{broker.port}"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        viewer.wait_for(lambda s: "hand-ended" in kinds(s), 5)
        got = kinds(viewer)
    assert got[0] == "hand-started" and got[-1] == "hand-ended" and "hole-card-dealt" not in got


def test_a_camera_is_recorded_as_video_and_replays_to_the_same_counts(tmp_path):
    """`tablectl record --camera`: the frames go into the recording's video with their times, the
    calibrations along; the replay reads them through the camera driver to the same chip counts."""
    from firmware_host.observations import ChipsInZone
    from firmware_host.sim.render import HOUSE_004, Scene, Stack
    from test_devices import _camera_over
    text = TABLE.read_text()
    table = tomllib.loads(text)
    readers = parse_readers(table, TABLE.name)
    deck = demo_deck("blue", "blue")
    recorder = Recorder("t-rec", "004", text, [{"deck": "blue", "back": "blue", "cards": dict(deck.cards)}], "blue")
    scenes = [Scene(colours=HOUSE_004)] * 4 + [Scene((Stack(-430, -300, 500, 3),), colours=HOUSE_004)] * 6
    feed = _camera_over(tmp_path, scenes, clock=recorder.now)
    chips, _ = open_emulated(readers, VirtualClock())
    master, slave = os.openpty()
    with SimShoe(master):
        deadline = time.monotonic() + 90        # a safety: the video's end stops it (1.4 s a frame seen on a busy CI)
        live = record_session(recorder, shoe_port=os.ttyname(slave), registry=Registry([deck]), readers=readers,
                              chips=chips, console_pins=load_console_pins(table, TABLE.name),
                              pin_factory=MockFactory(), cameras=[feed],
                              stop=lambda: feed.missed > 3 or time.monotonic() > deadline)
    os.close(slave)
    path = recorder.recording().save(tmp_path / "rec")
    recorder.discard()
    assert {"camera-right.mp4", "camera-right.jsonl", "camera-right-table.json", "camera-right-chips.json"} <= {
        p.name for p in path.iterdir()}
    recording = load(path)
    assert len(recording.cameras[0].times) == 10

    def counts(observations):
        return [(o.zone, o.chips, round(o.t, 6)) for o in observations if isinstance(o, ChipsInZone)]
    with Replay(recording) as replay:
        again = [o for line in replay.timeline for o in replay.observations(line)]
    assert counts(again) == counts(live)
    assert ("bet:1", ((500, 3),)) in [c[:2] for c in counts(live)]
