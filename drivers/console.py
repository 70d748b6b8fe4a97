"""The dealer console: four buttons in, an alert LED, a buzzer and a chips LED out (gpiozero).

Buttons become :class:`~firmware_host.observations.ConsolePress` observations,
stamped by an injected clock. Events drive the outputs: an irregularity that
needs the floor lights the alert LED (blinking) and beeps the buzzer until it
is resolved (:func:`alert_state` is the pure part). The chips LED asks the
dealer to look at a bet the camera cannot count with confidence (:meth:`Console.ask`):
the camera publishes no guess, the dealer spreads or straightens the stack. On a
Pi, gpiozero picks its native pin factory; tests and replays use
``gpiozero.pins.mock.MockFactory``.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpiozero import LED, Buzzer, DigitalInputDevice

from firmware_host.configfile import Section
from firmware_host.events import Event, HandEnded, Irregularity, IrregularityResolved, Notice
from firmware_host.observations import ConsoleButton, ConsolePress

if TYPE_CHECKING:
    from gpiozero.pins import Factory

log = logging.getLogger(__name__)

BUTTONS: tuple[ConsoleButton, ...] = ("new-hand", "confirm", "misdeal", "floor")


@dataclass(frozen=True)
class ConsolePins:
    """GPIO (BCM) numbers of the console; validated at start-up."""

    buttons: Mapping[str, int]
    alert_led: int
    buzzer: int
    chips_led: int | None = None  # "check the chips": a count the camera is not sure of

    def __post_init__(self) -> None:
        unknown = set(self.buttons) - set(BUTTONS)
        if unknown:
            raise ValueError(f"console.buttons: unknown button(s) {sorted(unknown)}; expected {BUTTONS}")
        missing = set(BUTTONS) - set(self.buttons)
        if missing:
            raise ValueError(f"console.buttons: missing {sorted(missing)}")
        pins = [*self.buttons.values(), self.alert_led, self.buzzer]
        pins += [self.chips_led] if self.chips_led is not None else []
        if len(set(pins)) != len(pins):
            raise ValueError(f"console: a pin is used twice in {pins}")
        for pin in pins:
            if not 2 <= pin <= 27:
                raise ValueError(f"console: GPIO{pin} is not a usable BCM pin (2-27)")


def load_console_pins(table: Mapping[str, Any], file: str = "table profile") -> ConsolePins:
    """The ``[console]`` table of a table profile (parsed TOML); a :class:`ConfigError` names the file and key."""
    console = Section(table, file).section("console")
    pin = {"minval": 2, "maxval": 27}  # the Pi's usable BCM pins
    buttons_section = console.section("buttons")
    buttons: dict[str, int] = {name: buttons_section.get_int(name, **pin) for name in BUTTONS}
    alert, buzzer = console.get_int("alert_led", **pin), console.get_int("buzzer", **pin)
    chips = console.get_int("chips_led", None, **pin)
    console.finish()
    try:
        return ConsolePins(buttons, alert, buzzer, chips)
    except ValueError as exc:  # a pin used twice
        raise console.error("", str(exc)) from None


def alert_state(events: Iterable[Event], alert: bool = False) -> bool:
    """Whether the alert is on after *events*, starting from *alert* (pure)."""
    for event in events:
        if isinstance(event, Irregularity) and event.needs_floor:
            alert = True
        elif isinstance(event, (IrregularityResolved, HandEnded)):
            alert = False
    return alert


def paused_state(events: Iterable[Event], paused: bool = False) -> bool:
    """Whether the TD has the table paused after *events*, starting from *paused* (pure)."""
    for event in events:
        if isinstance(event, Notice) and event.notice in ("table-paused", "table-resumed"):
            paused = event.notice == "table-paused"
    return paused


class Console:
    """The dealer console. ``on_press`` receives each :class:`ConsolePress`."""

    def __init__(self, pins: ConsolePins, on_press: Callable[[ConsolePress], None], *,
                 clock: Callable[[], float] = time.monotonic, pin_factory: Factory | None = None,
                 bounce_time: float | None = 0.02, blink: bool = True,
                 on_edge: Callable[[int, int, float], None] | None = None) -> None:
        self._clock = clock
        self._on_press = on_press
        self._on_edge = on_edge
        self._blink = blink            # False for replays: steady outputs, no timer threads
        self._devices: list[Any] = []         # gpiozero devices, closed in reverse order
        self.alert = False
        self.paused = False            # the TD paused the table: the LED breathes slowly until resumed
        self.asking: frozenset[str] = frozenset()  # the zones the dealer is asked to look at
        self.chips_led: LED | None = None
        try:
            self._buttons: dict[ConsoleButton, DigitalInputDevice] = {}
            for name in BUTTONS:
                pin = pins.buttons[name]
                # gpiozero's Button less its hold thread (no button is held here; that thread polls at 10 Hz
                # and takes up to 0.1 s to stop): pulled up, pressed when low, as a Button is
                button = DigitalInputDevice(pin, pull_up=True, bounce_time=bounce_time, pin_factory=pin_factory)
                button.when_activated = lambda _b=None, name=name, pin=pin: self._pressed(name, pin)
                if on_edge is not None:       # recording: the release edge too (buttons are active low)
                    button.when_deactivated = lambda _b=None, pin=pin: on_edge(pin, 1, self._clock())
                self._buttons[name] = button
                self._devices.append(button)
            self.led = LED(pins.alert_led, pin_factory=pin_factory)
            self._devices.append(self.led)
            self.buzzer = Buzzer(pins.buzzer, pin_factory=pin_factory)
            self._devices.append(self.buzzer)
            if pins.chips_led is not None:
                self.chips_led = LED(pins.chips_led, pin_factory=pin_factory)
                self._devices.append(self.chips_led)
        except Exception:
            self.close()
            raise

    def _pressed(self, name: ConsoleButton, pin: int) -> None:
        t = self._clock()
        if self._on_edge is not None:
            self._on_edge(pin, 0, t)
        self._on_press(ConsolePress(t, name))

    def show(self, events: Iterable[Event]) -> None:
        """Update the LED and buzzer from the engine's events: a fast blink and beeps while an
        irregularity waits for the floor; a slow blink (one beep) while the TD has the table paused."""
        events = list(events)
        alert = alert_state(events, self.alert)
        paused = paused_state(events, self.paused)
        if paused != self.paused:
            self.paused = paused
            log.info("table %s by the TD", "paused" if paused else "resumed")
            if not alert:
                self._show_pause()
        if alert and not self.alert:
            log.info("irregularity: alert on")
            if self._blink:
                self.led.blink(on_time=0.25, off_time=0.25)
                self.buzzer.beep(on_time=0.1, off_time=0.9, n=3)
            else:
                self.led.on()
                self.buzzer.on()
        elif self.alert and not alert:
            self.buzzer.off()
            self._show_pause()
        self.alert = alert

    def _show_pause(self) -> None:
        """The LED as the pause wants it: a slow blink while paused (steady without blinking), else off."""
        if not self.paused:
            self.led.off()
        elif self._blink:
            self.led.blink(on_time=1.0, off_time=1.0)
            self.buzzer.beep(on_time=0.3, off_time=0.3, n=1)
        else:
            self.led.on()

    def ask(self, zones: Iterable[str] | Mapping[str, str]) -> None:
        """Ask the dealer to look at the chips of *zones* (held still, not counted with confidence;
        a mapping gives why, logged with them): the chips LED stays on while any is asked; none lit
        without a chips LED (logged only)."""
        why = zones if isinstance(zones, Mapping) else {}
        zones = frozenset(zones)
        if zones != self.asking:
            if zones - self.asking:
                log.info("dealer asked to check the chips in %s", ", ".join(
                    f"{z} ({why[z]})" if why.get(z) else z for z in sorted(zones - self.asking)))
            if self.chips_led is not None:
                self.chips_led.on() if zones else self.chips_led.off()
            self.asking = zones

    def close(self) -> None:
        """Release this console's pins, and only them."""
        for device in reversed(self._devices):
            device.close()
        self._devices.clear()

    def __enter__(self) -> Console:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
