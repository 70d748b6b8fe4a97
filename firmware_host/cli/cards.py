"""The card path: ``tablectl calibrate deck`` and ``tablectl bench shoe``."""
from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from firmware_host.cli.common import Parsers, percentile
from firmware_host.observations import DECK, DeviceFault, DeviceRecovered, ForeignCard, Observation

if TYPE_CHECKING:
    from calibration.deck import Deck, Registry
    from drivers.shoe import Shoe


def register(parsers: Parsers) -> None:
    deck = parsers.calibrate.add_parser(
        "deck", help="register a deck: run its 52 cards through the shoe",
        description="Run the 52 cards of one deck through the shoe, one at a time. Without --named, in "
                    "this order: 2c 3c .. Ac, 2d .. Ad, 2h .. Ah, 2s .. As (clubs, diamonds, hearts, spades; "
                    "2 to ace). With --named, in any order, naming each card on stdin (one per line, e.g. "
                    "'As', 'td', '10h') before it goes through. Writes DIR/deck-ID.json, or refuses the deck "
                    "and says which card is missing, repeated or unreadable.")
    deck.add_argument("--port", required=True, help="the shoe's serial port (tty path or pyserial URL)")
    deck.add_argument("--deck", required=True, help="the deck id (e.g. red-1)")
    deck.add_argument("--back", required=True, help="the back colour (e.g. red)")
    deck.add_argument("--dir", required=True, help="the directory of the deck files")
    deck.add_argument("--named", action="store_true", help="any order: name each card on stdin")
    deck.add_argument("--baud", type=int, default=115200)
    deck.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each card (default 60)")
    deck.add_argument("--force", action="store_true", help="replace an existing file for this deck id")
    deck.set_defaults(func=cmd_calibrate_deck)

    shoe = parsers.bench.add_parser("shoe", help="shoe driver over a pty: frames/s, frame-to-observation latency")
    shoe.add_argument("--baud", type=int, default=115200, help="line speed the frames are paced at")
    shoe.add_argument("--frames", type=int, default=2000, help="frames for the latency run (default 2000)")
    shoe.set_defaults(func=cmd_bench_shoe)


# -- calibrate deck ------------------------------------------------------------------

def _card_name(text: str) -> str | None:
    """'As', 'as', '10h' -> the card, else None."""
    text = text.strip()
    if text[:2] == "10":
        text = "T" + text[2:]
    name = text[:1].upper() + text[1:].lower()
    return name if name in DECK else None


def _names(stream: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of *stream*, read one at a time."""
    for number, line in enumerate(stream, 1):
        if line.strip():
            yield number, line.strip()


def cmd_calibrate_deck(args: argparse.Namespace) -> int:
    import serial

    from calibration.deck import Deck, DeckError, Registry, check_deck_id, load_decks
    from drivers.shoe import Shoe

    err = sys.stderr
    if args.baud <= 0 or args.timeout <= 0:
        print(f"error: --baud and --timeout must be positive (got {args.baud}, {args.timeout})", file=err)
        return 2
    try:
        check_deck_id(args.deck)
        if not args.back.strip():
            raise DeckError("--back: the back colour is required")
        others = [d for d in load_decks(args.dir) if d.deck != args.deck] if Path(args.dir).is_dir() else []
    except DeckError as exc:
        print(f"error: {exc}", file=err)
        return 2
    target = Path(args.dir) / f"deck-{args.deck}.json"
    if target.exists() and not args.force:
        print(f"error: {target} exists (use --force to replace it)", file=err)
        return 2
    known = {uid: (d.deck, card) for d in others for uid, card in d.uids.items()}

    reads: list[tuple[str, str | None]] = []      # (card as named or expected, UID or None if unreadable)
    problems: list[str] = []
    names = _names(sys.stdin) if args.named else None
    try:                                      # a port that is not there is said at once, not after 52 cards
        serial.serial_for_url(args.port, baudrate=args.baud).close()
    except (serial.SerialException, ValueError) as exc:
        print(f"error: --port {args.port}: cannot open the shoe's serial port ({exc})", file=err)
        return 2
    with Shoe(args.port, Registry(), baudrate=args.baud) as shoe:
        for index in range(52):
            if names is not None:
                label = None
                for number, text in names:
                    label = _card_name(text)
                    if label is None:
                        problems.append(f"stdin line {number}: {text!r} is not a card")
                        continue
                    break
                if label is None:
                    break
                print(f"[{index + 1}/52] {label}: pass it through the shoe", flush=True)
            else:
                label = DECK[index]
                print(f"[{index + 1}/52] pass {label}", flush=True)
            uid = _next_read(shoe, args.timeout, problems, label)
            if uid is False:
                break
            reads.append((label, uid))
            print(f"         {label}: {uid or 'NO TAG READ'}", flush=True)

    problems += _check(reads, known)
    if problems:
        print(f"deck {args.deck} refused:", file=err)
        for problem in problems:
            print(f"  {problem}", file=err)
        return 1
    try:
        path = Deck(args.deck, args.back, {label: uid for label, uid in reads if uid is not None}).save(args.dir)
    except DeckError as exc:
        print(f"error: {exc}", file=err)
        return 2
    print(f"deck {args.deck} ({args.back} back): 52 cards registered in {path}")
    return 0


def _next_read(shoe: Shoe, timeout: float, problems: list[str], label: str) -> str | None | Literal[False]:
    """The UID of the next card drawn (None: unreadable), or False if none came in time."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            problems.append(f"{label}: no card came through the shoe within {timeout:g} s")
            return False
        try:
            obs = shoe.get(timeout=remaining)
        except queue.Empty:
            continue
        if isinstance(obs, ForeignCard):
            return obs.uid
        if isinstance(obs, DeviceFault):
            if obs.fault == "unreadable-card":
                return None
            print(f"shoe fault: {obs.fault} {obs.detail}", file=sys.stderr, flush=True)
            if obs.fault == "possibly-missed-card":
                problems.append(f"around {label}: the shoe may have missed a card ({obs.detail})")
        elif isinstance(obs, DeviceRecovered):
            print(f"shoe recovered: {obs.detail}", file=sys.stderr, flush=True)


def _check(reads: list[tuple[str, str | None]], known: dict[str, tuple[str, str]]) -> list[str]:
    """Unreadable, repeated (same tag twice or same name twice), missing, or already another deck's."""
    problems: list[str] = []
    seen_uid: dict[str, str] = {}
    seen_name: set[str] = set()
    for label, uid in reads:
        if label in seen_name:
            problems.append(f"{label}: named twice")
        seen_name.add(label)
        if uid is None:
            problems.append(f"{label}: unreadable (the shoe saw a card but read no tag)")
        elif uid in seen_uid:
            problems.append(f"{label}: repeated: same tag {uid} as {seen_uid[uid]} (a card went through twice)")
        elif uid in known:
            deck, card = known[uid]
            problems.append(f"{label}: tag {uid} is already {card} of deck {deck}")
        else:
            seen_uid[uid] = label
    missing = [card for card in DECK if card not in seen_name]
    if missing:
        problems.append(f"missing: {' '.join(missing)}")
    return problems


# -- bench shoe -----------------------------------------------------------------------

def _bench_deck() -> tuple[Deck, Registry]:
    from calibration.deck import Deck, Registry
    deck = Deck("bench", "blue", {card: f"04{i:012X}" for i, card in enumerate(DECK, 1)})
    return deck, Registry([deck])


def _draw_frames(deck: Deck, count: int, first_seq: int = 1) -> list[bytes]:
    """*count* draw frames (the simulator's encoder) cycling through the deck, seqs from *first_seq*."""
    from drivers.emulated.shoe import T_DRAW, draw_body, frame
    uids = list(deck.cards.values())
    return [frame(T_DRAW, first_seq + k, draw_body(uids[k % 52], "up")) for k in range(count)]


def cmd_bench_shoe(args: argparse.Namespace) -> int:
    """Decoder alone, driver over a pty in a burst, and per-frame latency paced at the baud rate."""
    import os
    import statistics
    import tty

    from drivers.shoe import Shoe, ShoeSession

    if args.baud <= 0 or args.frames <= 0:
        print(f"error: --baud and --frames must be positive (got {args.baud}, {args.frames})", file=sys.stderr)
        return 2
    deck, registry = _bench_deck()

    frames = _draw_frames(deck, 20000)
    wire = b"".join(frames)
    session = ShoeSession(registry)
    start = time.perf_counter()
    out = 0
    for i in range(0, len(wire), 4096):
        out += len(session.feed(wire[i:i + 4096], 0.0)[0])
    decoder_fps = len(frames) / (time.perf_counter() - start)
    assert out == len(frames), (out, len(frames))

    master, slave = os.openpty()
    tty.setraw(slave)
    stop = threading.Event()

    def drain() -> None:   # read the driver's acks so the pty never fills
        import select
        while not stop.is_set():
            if select.select([master], [], [], 0.05)[0]:
                try:
                    os.read(master, 65536)
                except OSError:
                    return

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    got: list[float] = []
    done = threading.Event()
    expected = [0]

    def seen(obs: Observation) -> None:
        got.append(time.monotonic())
        if len(got) >= expected[0]:
            done.set()

    try:
        with Shoe(os.ttyname(slave), registry, baudrate=args.baud, on_observation=seen, read_timeout=0.01) as shoe:
            time.sleep(0.2)      # the driver opens the port
            burst = _draw_frames(deck, 5000)
            expected[0] = len(burst)
            start = time.monotonic()
            for f in burst:
                os.write(master, f)
            done.wait(30)
            driver_fps = len(got) / (got[-1] - start) if got else 0.0
            burst_ok = len(got)

            got.clear()
            done.clear()
            paced = _draw_frames(deck, args.frames, first_seq=len(burst) + 1)   # seqs go on from the burst's
            expected[0] = len(paced)
            written = []
            for f in paced:
                os.write(master, f)
                written.append(time.monotonic())
                time.sleep(len(f) * 10 / args.baud)
            done.wait(10)
            counters = shoe.counters
    finally:
        stop.set()
        drainer.join()
        os.close(master)
        os.close(slave)
    latencies = [(g - w) * 1000 for g, w in zip(got, written)]
    wire_fps = args.baud / 10 / len(paced[0])
    figures = {
        "bench": "shoe",
        "baud": args.baud,
        "decoder_frames_per_s": round(decoder_fps),
        "driver_frames_per_s": round(driver_fps),
        "wire_frames_per_s": round(wire_fps),
        "latency_frames": len(latencies),
        "latency_median_ms": round(statistics.median(latencies), 3) if latencies else None,
        "latency_p99_ms": round(percentile(latencies, 99), 3) if latencies else None,
        "lost": (len(burst) - burst_ok) + (len(paced) - len(latencies)),
        "crc_errors": counters["crc_errors"], "framing_errors": counters["framing_errors"],
    }
    print(f"decoder alone:         {figures['decoder_frames_per_s']} draw frames/s (bytes -> observations, one core)")
    print(f"driver over a pty:     {figures['driver_frames_per_s']} frames/s ({len(burst)} frames in one burst)")
    print(f"wire at {args.baud} 8N1:  {figures['wire_frames_per_s']} frames/s at most ({len(paced[0])}-byte draw)")
    print(f"latency, paced at the line rate ({len(latencies)} frames), last byte written -> observation:")
    print(f"  median {figures['latency_median_ms']} ms, p99 {figures['latency_p99_ms']} ms")
    print(f"lost frames: {figures['lost']}, CRC errors: {figures['crc_errors']}, "
          f"framing errors: {figures['framing_errors']}")
    print(json.dumps(figures))
    return 0 if figures["lost"] == 0 else 1

