"""``tablectl bench NAME``: measurements, readable first, then one JSON line."""
from __future__ import annotations

import gc
import json
import resource
import time

from firmware_host.cli.main import _pluribus, _profile


def _texts(path: str) -> list[str]:
    """Each hand of a .phhs file as its own PHH text (so both sides parse the same text)."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fp:
        text = fp.read()
    hands, current = [], []
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


def bench_engine(args) -> int:
    """Pluribus hands through the engine, against pokerkit alone on the same PHH texts."""
    from pokerkit import HandHistory

    from firmware_host.hil.phh import verify_hand

    path = args.file or _pluribus()
    texts = _texts(path)
    if args.limit:
        texts = texts[: args.limit]
    profile = _profile(args.profile)

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
        agree += verify_hand(number, HandHistory.loads(text), profile).agree
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

