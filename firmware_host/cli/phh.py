"""Real hands in PHH format: ``tablectl phh verify`` and ``tablectl bench engine``."""
from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time

from firmware_host.cli.common import Parsers, existing, pluribus, profile, progress


def register(parsers: Parsers) -> None:
    phh = parsers.commands.add_parser("phh", help="real hands in PHH format")
    actions = phh.add_subparsers(dest="phh_command", required=True, metavar="ACTION")
    verify = actions.add_parser("verify", help="replay PHH hands through the engine; compare with the record")
    verify.add_argument("files", nargs="*", help=".phh or .phhs files (default: the Pluribus hands)")
    verify.add_argument("--profile", default=None,
                        help="house rules: 000..004 or a TOML file (default: each hand's _house field, else 000)")
    verify.add_argument("--limit", type=int, default=0, help="only the first N hands of each file")
    verify.add_argument("--quiet", action="store_true", help="print disagreements only")
    verify.set_defaults(func=cmd_verify)

    engine = parsers.bench.add_parser("engine", help="Pluribus hands through the engine vs pokerkit alone")
    engine.add_argument("--file", default=None, help="PHH file (default: the 10,000 Pluribus hands)")
    engine.add_argument("--limit", type=int, default=0)
    engine.add_argument("--profile", default="000")
    engine.set_defaults(func=cmd_bench_engine)


def cmd_verify(args: argparse.Namespace) -> int:
    from pokerkit import HandHistory

    from firmware_host.hil.phh import load, verify_hand
    from firmware_host.rules.profile import Profile

    houses: dict[str, Profile] = {}

    def house_of(hh: HandHistory) -> Profile:
        """--profile, else the hand's own house (a table's hand history says it), else 000."""
        name = args.profile or str(hh.user_defined_fields.get("_house", "000"))
        if name not in houses:
            houses[name] = profile(name)
        return houses[name]

    total = agree = odd = voided = 0
    for path in [str(existing(f, "phh verify")) for f in args.files] or [pluribus()]:
        hands = load(path)[: args.limit] if args.limit else load(path)
        with progress(len(hands), "hands") as bar:    # shown on a terminal only
            for number, hh in enumerate(hands, 1):
                bar.update()
                if hh.user_defined_fields.get("_voided"):
                    voided += 1          # the TD voided it: every bet returned, nothing to replay
                    continue
                verdict = verify_hand(number, hh, house_of(hh))
                total += 1
                agree += verdict.agree
                odd += verdict.odd_chip and verdict.agree
                if not verdict.agree:
                    bar.write(f"{path} hand {verdict.number}: DISAGREES: {verdict.detail}", file=sys.stdout)
                elif verdict.odd_chip and not args.quiet:
                    bar.write(f"{path} hand {verdict.number}: agrees within one chip: {verdict.detail} (000 §20)",
                              file=sys.stdout)
    if odd:
        print(f"{odd} hand(s) split a pot with an odd chip: the record halves it; the table cannot, "
              f"so they agree when the odd chip went where the house profile says and every stack "
              "is within one chip of the record")
    if voided:
        print(f"{voided} hand(s) marked _voided (the TD voided them, every bet returned): not replayed")
    print(f"agree: {agree}/{total}")
    return 0 if agree == total else 1


def _texts(path: str) -> list[str]:
    """Each hand of a .phhs file as its own PHH text (so both sides parse the same text)."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fp:
        text = fp.read()
    hands: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") and line.rstrip().endswith("]") and line[1:-1].strip().isdigit():
            if current:
                hands.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current and any(current):
        hands.append("\n".join(current))
    return hands


def cmd_bench_engine(args: argparse.Namespace) -> int:
    """Pluribus hands through the engine, against pokerkit alone on the same PHH texts."""
    from pokerkit import HandHistory

    from firmware_host.hil.phh import verify_hand

    path = str(existing(args.file, "--file")) if args.file else pluribus()
    texts = _texts(path)
    if args.limit:
        texts = texts[: args.limit]
    house = profile(args.profile)

    gc.collect()
    start = time.perf_counter()
    for text in texts:
        for _ in HandHistory.loads(text):
            pass
    pokerkit_s = time.perf_counter() - start

    gc.collect()
    start = time.perf_counter()
    agree = 0
    for number, text in enumerate(texts, 1):
        agree += verify_hand(number, HandHistory.loads(text), house).agree
    engine_s = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    n = len(texts)
    figures = {
        "bench": "engine",
        "hands": n,
        "agree": agree,
        "engine_hands_per_s": round(n / engine_s, 1),
        "pokerkit_hands_per_s": round(n / pokerkit_s, 1),
        "engine_overhead": round(engine_s / pokerkit_s, 2),
        "peak_rss_mib": round(peak_mib, 1),
    }
    print(f"hands:                 {n} ({agree} agree with the record)")
    print(f"engine:                {figures['engine_hands_per_s']} hands/s "
          "(PHH text -> observations -> engine -> events)")
    print(f"pokerkit alone:        {figures['pokerkit_hands_per_s']} hands/s (PHH text -> pokerkit states)")
    print(f"engine / pokerkit:     {figures['engine_overhead']}x the time")
    print(f"peak memory (RSS):     {figures['peak_rss_mib']} MiB")
    print(json.dumps(figures))
    return 0
