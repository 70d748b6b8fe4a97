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
from drivers.mfrc522_emu import VirtualClock
from drivers.shoe_sim import SimShoe
from drivers.zones import open_emulated
from firmware_host.broker import LocalMosquitto
from firmware_host.devices import Devices
from firmware_host.observations import MoveButton, SeatPresence, SetLevel
from firmware_host.service import Service, load_config
from firmware_host.simulate import demo_deck

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
