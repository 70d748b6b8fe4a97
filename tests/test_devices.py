"""The service on the table's devices: the simulated shoe on a pty, emulated MFRC522s, the console on
MockFactory, a real Mosquitto. A card to the wrong seat lights the alert LED until the dealer confirms."""
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
from firmware_host.observations import MoveButton, SeatPresence, SetLevel
from firmware_host.service.config import load_config
from firmware_host.service.devices import Devices
from firmware_host.service.service import Service
from firmware_host.sim.broker import LocalMosquitto
from firmware_host.sim.simulate import demo_deck
from mqtt_helpers import Subscriber, write_config

TABLE = Path(__file__).parents[1] / "hardware" / "tables" / "demo-10.toml"


def test_service_on_the_devices_alerts_the_console_and_publishes(tmp_path):
    table = tomllib.loads(TABLE.read_text())
    readers = parse_readers(table, TABLE.name)
    deck = demo_deck("blue", "blue")
    chips, emulators = open_emulated(readers, VirtualClock())
    factory = MockFactory()
    master, slave = os.openpty()
    with LocalMosquitto(tmp_path) as broker, SimShoe(master) as shoe:
        td = Subscriber(broker.port, ["pokerhall/v1/table/t1/irregularity", "pokerhall/v1/table/t1/event"])
        devices = Devices(shoe_port=os.ttyname(slave), registry=Registry([deck]), readers=readers, chips=chips,
                          console_pins=load_console_pins(table, TABLE.name), pin_factory=factory)
        service = Service(load_config(write_config(tmp_path / "c", broker.port)),
                          on_event=lambda event: devices.show((event,))).start()
        stop = threading.Event()
        service.feed_from(devices.observations(stop.is_set))
        loop = threading.Thread(target=service.run, kwargs={"until_source_ends": False, "stop": stop})
        loop.start()
        try:
            for seat in (1, 2, 3):
                service.handle(SeatPresence(0.0, seat, True, player=f"p{seat}", stack=10000), origin="command")
            service.handle(SetLevel(0.0, 50, 100), origin="command")
            service.handle(MoveButton(0.0, 3), origin="command")
            factory.pin(5).drive_low(), factory.pin(5).drive_high()            # new hand
            shoe.draw(deck.cards["As"], face="down")
            shoe.wait_acked()
            emulators["seat:2"].place(deck.cards["As"])                         # seat 1 should have had it
            assert td.wait_for(lambda s: any(p.get("event", {}).get("irregularity") == "first-card-wrong-seat"
                                             for p in s.on("/irregularity")), 10)
            led = factory.pin(20)
            deadline = time.monotonic() + 5
            while not led.state and time.monotonic() < deadline:
                time.sleep(0.05)
            assert led.state and devices.console.alert
            factory.pin(6).drive_low(), factory.pin(6).drive_high()            # the dealer confirms: misdeal
            assert td.wait_for(lambda s: any(p.get("event", {}).get("kind") == "hand-ended"
                                             for p in s.on("/event")), 10)
            deadline = time.monotonic() + 5
            while devices.console.alert and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not devices.console.alert and not led.state
        finally:
            stop.set()
            loop.join(10)
            service.close()
            devices.close()
            td.close()
    os.close(slave)


def _camera_over(tmp_path, scenes, name="right", clock=None):
    """A chip camera whose sensor is a video file of rendered *scenes*, calibrated as an installer does
    (frames stamped by *clock* as they are read, like a live camera's, when given)."""
    import cv2
    import numpy as np

    from calibration.geometry import calibrate_table, load_layout
    from drivers.camera import open_replay
    from firmware_host.sim.render import HOUSE_004, mount_camera, render
    from firmware_host.vision import counter as vision
    from firmware_host.vision.feed import CameraFeed
    data = Path(__file__).parent / "data" / "vision"
    layout = load_layout(Path(__file__).parents[1] / "hardware" / "camera" / "table8.toml").view(name)
    calib = calibrate_table(cv2.imread(str(data / f"table_{name}.jpg")), layout)
    models = vision.learn_chips(calib, {v: cv2.imread(str(data / f"chips_{name}_{v}.jpg")) for v in HOUSE_004})
    video = tmp_path / f"{name}.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (1280, 720))
    camera = mount_camera(layout)
    for k, scene in enumerate(scenes):
        frame = render(scene, layout, camera, seed=1).astype(np.int16)
        frame += np.random.default_rng(k).normal(0, 2, frame.shape).astype(np.int16)  # a live sensor's noise
        writer.write(np.clip(frame, 0, 255).astype(np.uint8))
    writer.release()
    if clock is not None:
        from drivers.camera import Camera
        return CameraFeed(name, Camera(cv2.VideoCapture(str(video)), clock, str(video)), calib, models)
    return CameraFeed(name, open_replay(str(video), start=time.monotonic()), calib, models)


def _devices_with(tmp_path, feed, factory):
    table = tomllib.loads(TABLE.read_text())
    readers = parse_readers(table, TABLE.name)
    chips, _ = open_emulated(readers, VirtualClock())
    master, slave = os.openpty()
    shoe = SimShoe(master)
    devices = Devices(shoe_port=os.ttyname(slave), registry=Registry([demo_deck("blue", "blue")]), readers=readers,
                      chips=chips, console_pins=load_console_pins(table, TABLE.name), pin_factory=factory,
                      cameras=[feed])
    return devices, shoe, slave


def test_a_camera_among_the_devices_gives_chip_counts_and_asks_the_dealer_when_unsure(tmp_path):
    from firmware_host.observations import ChipsInZone
    from firmware_host.sim.render import HOUSE_004, Scene, Stack
    counted = Scene((Stack(-430, -300, 500, 3),), colours=HOUSE_004)
    edge = Scene((Stack(-430, -300, 500, 3), Stack(-348, -300, 500, 2)), colours=HOUSE_004)  # one on bet:1's edge
    feed = _camera_over(tmp_path, [counted] * 4 + [edge] * 6)
    factory = MockFactory()
    devices, shoe, slave = _devices_with(tmp_path, feed, factory)
    seen, lit = [], False
    try:
        deadline = time.monotonic() + 60   # a safety: it stops once the LED is lit
        stop = lambda: time.monotonic() > deadline or (lit and seen)  # noqa: E731
        for obs in devices.observations(stop):
            if isinstance(obs, ChipsInZone):
                seen.append(obs)
            lit = lit or factory.pin(16).state
        bet1 = [o.chips for o in seen if o.zone == "bet:1"]
        assert bet1 == [((500, 3),)]  # once; a stack on the zone's edge is never a guess (whose chips?)
        assert all(o.chips == () for o in seen if o.zone != "bet:1")  # the empty zones, once each
        deadline = time.monotonic() + 10
        while not factory.pin(16).state and time.monotonic() < deadline:
            time.sleep(0.05)
        assert factory.pin(16).state and devices.console.asking == {"bet:1"}  # the chips LED: look at bet:1
    finally:
        devices.close()
        shoe.close()
        os.close(slave)
    assert feed.camera.closed


def test_tablectl_run_checks_its_cameras_before_opening_anything(tmp_path):
    import subprocess
    import sys
    demo_deck("blue", "blue").save(tmp_path / "decks")
    config = write_config(tmp_path / "c", 1)

    def run(*camera):
        return subprocess.run([sys.executable, "-m", "firmware_host.cli", "run", "--config", str(config),
                               "--devices", str(TABLE), "--decks", str(tmp_path / "decks"), *camera],
                              capture_output=True, text=True, timeout=60)
    done = run("--camera", "right")
    assert done.returncode == 2 and "--camera expects NAME=INDEX" in done.stderr
    done = run("--camera", "right=0", "--calibration", str(tmp_path))
    assert done.returncode == 2 and "camera-right-table.json: not a usable table calibration" in done.stderr


def test_the_first_card_from_the_shoe_after_new_hand_puts_its_deck_in_play(tmp_path):
    """002 C.1: two decks alternate. The dealer's new-hand press, then a red card from the shoe: the
    red deck is in play, and a blue card after it is a wrong-back card."""
    from firmware_host.observations import CardEntered, ConsolePress, WrongBackCard
    table = tomllib.loads(TABLE.read_text())
    readers = parse_readers(table, TABLE.name)
    chips, _ = open_emulated(readers, VirtualClock())
    blue, red = demo_deck("blue", "blue"), demo_deck("red", "red")
    factory = MockFactory()
    master, slave = os.openpty()
    with SimShoe(master) as shoe:
        devices = Devices(shoe_port=os.ttyname(slave), registry=Registry([blue, red]), readers=readers, chips=chips,
                          console_pins=load_console_pins(table, TABLE.name), pin_factory=factory)
        try:
            seen = []
            factory.pin(5).drive_low(), factory.pin(5).drive_high()            # new hand
            deadline = time.monotonic() + 5
            while not any(isinstance(o, ConsolePress) for o in seen) and time.monotonic() < deadline:
                seen += devices.drain()
                time.sleep(0.02)
            for card, deck in (("As", red), ("Ks", blue)):
                shoe.draw(deck.cards[card], face="down")
                shoe.wait_acked()
            deadline = time.monotonic() + 5
            while sum(isinstance(o, (CardEntered, WrongBackCard)) for o in seen) < 2 and time.monotonic() < deadline:
                seen += devices.drain()
                time.sleep(0.02)
            cards = [(type(o).__name__, o.card) for o in seen if isinstance(o, (CardEntered, WrongBackCard))]
            assert cards == [("CardEntered", "As"), ("WrongBackCard", "Ks")]
            assert devices.registry.in_play == "red"
        finally:
            devices.close()
    os.close(slave)
