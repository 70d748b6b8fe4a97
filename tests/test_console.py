"""The dealer console on gpiozero's MockFactory: presses in, alert LED and buzzer out."""
import pytest
from gpiozero import LED
from gpiozero.pins.mock import MockFactory

from drivers.console import Console, ConsolePins, load_console_pins
from firmware_host.observations import CardEntered
from table import Table

PINS = ConsolePins({"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19}, alert_led=20, buzzer=21)


@pytest.fixture
def factory():
    return MockFactory()


def test_a_press_is_a_timestamped_observation(factory):
    seen = []
    with Console(PINS, seen.append, clock=lambda: 42.0, pin_factory=factory):
        pin = factory.pin(6)
        pin.drive_low()          # pressed (pull-up: active low)
        pin.drive_high()
    assert [(o.t, o.button) for o in seen] == [(42.0, "confirm")]


def test_irregularity_lights_the_alert_until_the_dealer_resolves_it(factory):
    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3)
    table.new_hand()
    console = Console(PINS, lambda obs: console.show(table.feed(obs)), pin_factory=factory)
    led, buzzer = factory.pin(20), factory.pin(21)
    console.show(table.feed(CardEntered(table.tick(), "seat:2", "As")))      # first card to the wrong seat
    assert console.alert and table.engine.on_hold == "first-card-wrong-seat"
    assert led.state or any(s for _, s in led.states)                          # blinking
    assert any(s for _, s in buzzer.states)
    factory.pin(6).drive_low()                                                 # the dealer confirms
    factory.pin(6).drive_high()
    assert not console.alert and table.engine.on_hold is None
    assert not led.state and not buzzer.state
    console.close()


def test_close_releases_only_its_own_pins(factory):
    other = LED(26, pin_factory=factory)
    console = Console(PINS, lambda obs: None, pin_factory=factory)
    console.close()
    again = LED(20, pin_factory=factory)         # its pins are free again
    assert not other.closed
    again.close(), other.close()


def test_bad_pin_map_fails_at_start_up_naming_the_key():
    with pytest.raises(ValueError, match="unknown button"):
        ConsolePins({"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19, "deal": 4}, 20, 21)
    with pytest.raises(ValueError, match="used twice"):
        ConsolePins({"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19}, 5, 21)


def test_the_chips_led_asks_the_dealer_to_look_at_an_unsure_count():
    factory = MockFactory()
    pins = ConsolePins({"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19}, alert_led=20, buzzer=21,
                       chips_led=16)
    with Console(pins, lambda press: None, pin_factory=factory, blink=False) as console:
        led = factory.pin(16)
        console.ask({"bet:3"})
        assert led.state and console.asking == {"bet:3"}
        console.ask({"bet:3", "pot"})
        assert led.state
        console.ask(())
        assert not led.state
    with Console(PINS, lambda press: None, pin_factory=MockFactory(), blink=False) as console:
        console.ask({"bet:3"})  # no chips LED on this console: asked, logged, nothing lit
        assert console.asking == {"bet:3"} and console.chips_led is None


def test_the_dealer_is_asked_with_why_when_the_cameras_say_it(caplog):
    """The cameras say why a zone is not counted (``vision.feed.unsure``): the log says it with the zone."""
    with caplog.at_level("INFO", logger="drivers.console"), \
            Console(PINS, lambda press: None, pin_factory=MockFactory(), blink=False) as console:
        console.ask({"bet:3": "a chip could lie wholly hidden behind a stack", "pot": ""})
        assert console.asking == {"bet:3", "pot"}
    assert "bet:3 (a chip could lie wholly hidden behind a stack), pot" in caplog.text


def test_the_chips_led_pin_is_checked_with_the_others():
    with pytest.raises(ValueError, match="used twice"):
        ConsolePins({"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19}, 20, 21, chips_led=20)
    table = {"console": {"alert_led": 20, "buzzer": 21, "chips_led": 16,
                         "buttons": {"new-hand": 5, "confirm": 6, "misdeal": 13, "floor": 19}}}
    assert load_console_pins(table).chips_led == 16


def test_a_paused_table_starts_no_hand_and_the_console_shows_it(factory):
    """Issue 13 item 8: the TD's pause (000 §1: the TD decides) holds play: the dealer's new-hand press
    waits, the alert LED blinks slowly (one beep) until the TD resumes; then the hand starts."""
    from firmware_host.events import HandStarted, Notice
    from firmware_host.observations import Pause

    table = Table({1: 10000, 2: 10000, 3: 10000}, button=3)
    console = Console(PINS, lambda obs: console.show(table.feed(obs)), pin_factory=factory)
    led, buzzer = factory.pin(20), factory.pin(21)
    console.show(table.feed(Pause(table.tick(), True, "dinner break")))
    assert console.paused and not console.alert
    assert led.state or any(s for _, s in led.states)                  # blinking slowly
    assert any(s for _, s in buzzer.states)                             # one beep
    factory.pin(5).drive_low()                                          # the dealer presses new-hand
    factory.pin(5).drive_high()
    assert not any(isinstance(e, HandStarted) for e in table.events)    # no hand while paused
    out = table.feed(Pause(table.tick(), False))
    console.show(out)
    assert [e.notice for e in out if isinstance(e, Notice)] == ["table-resumed"]
    assert any(isinstance(e, HandStarted) for e in out)                 # the press, applied on resume
    assert not console.paused and not led.state
    console.close()
