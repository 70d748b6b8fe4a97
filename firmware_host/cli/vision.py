"""The chip cameras: ``tablectl calibrate table``, ``calibrate chips``, ``vision evaluate`` and ``bench vision``."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from firmware_host.cli.common import Parsers, corpus, profile

if TYPE_CHECKING:
    from calibration.geometry import Layout
    from firmware_host.vision.evaluation import Calibrated

Made = dict[tuple[Any, ...], "Calibrated"]  # calibrations made, by layout, camera and pictures (calibrate_cameras)

EVALUATION_SET = "tests/data/vision"
PHYSICAL_SETS = "tests/data/vision-physical"  # one set per session, rendered by firmware_host.sim.physical
RETAKE_SETS = "tests/data/vision-retake"  # another take of some of those sessions (sim.physical --seed)
OTHER_SETS = "tests/data/vision-other"  # sessions on other felts or with other chips (sim.physical --felt, --shades)


def register(parsers: Parsers) -> None:
    table = parsers.calibrate.add_parser("table", help="a camera's geometry from the ArUco markers on the felt")
    table.add_argument("--camera", help="camera name in the layout (default: the first)")
    table.add_argument("--image", help="picture of the table from that camera (default: the test corpus's)")
    table.add_argument("--layout", default=None,
                       help="zone layout TOML (table mm; default: the shipped hardware/camera/table8.toml)")
    table.add_argument("--out", help="calibration file (default camera-NAME-table.json)")
    table.add_argument("--picture", help="annotated picture for the installer (default camera-NAME-table.jpg)")
    table.set_defaults(func=cmd_calibrate_table)

    chips = parsers.calibrate.add_parser("chips", help="colour model per denomination, from one picture of each")
    chips.add_argument("--table", default="camera-right-table.json", help="file written by `calibrate table`")
    chips.add_argument("--show", action="append", metavar="VALUE=IMAGE",
                       default=None, help="a picture of chips of VALUE in the zones (repeat per denomination; "
                       "default: the test corpus's)")
    chips.add_argument("--zone", default=None, help="read the felt's colour in this zone (default: every chip zone)")
    chips.add_argument("--profile", default="004", help="house profile whose chip set must be shown ('' = any)")
    chips.add_argument("--out", help="colour file (default camera-NAME-chips.json)")
    chips.add_argument("--picture", help="contact sheet (default camera-NAME-chips.jpg)")
    chips.set_defaults(func=cmd_calibrate_chips)

    group = parsers.commands.add_parser("vision", help="the chip cameras' counting, measured")
    actions = group.add_subparsers(dest="vision_command", required=True, metavar="ACTION")
    evaluate = actions.add_parser("evaluate", help="count a labelled set of pictures (docs/vision.md's format); "
                                  "figures per tag, then one JSON line")
    evaluate.add_argument("dir", help="the set: labels.json, calibration pictures, frames")
    evaluate.add_argument("--calibration", metavar="DIR2", default=None,
                          help="calibrate from this set's calibration pictures instead (another light, a retake)")
    evaluate.add_argument("--frames", type=int, default=3, help="frames a count must hold to be stable")
    evaluate.set_defaults(func=cmd_vision_evaluate)

    vision = parsers.bench.add_parser("vision", help="chip counting on the committed evaluation set")
    vision.add_argument("--data", default=None, help="the evaluation set (default: tests/data/vision)")
    vision.add_argument("--frames", type=int, default=3, help="frames a count must hold to be stable")
    vision.add_argument("--physical", default=None, metavar="DIR",
                        help="sets rendered physically, one per sub-folder (default: tests/data/vision-physical)")
    vision.add_argument("--retake", default=None, metavar="DIR",
                        help="other takes of some of those sessions, each named by its labels' session "
                             "(default: tests/data/vision-retake)")
    vision.add_argument("--other", default=None, metavar="DIR",
                        help="sets on other felts or with other chips, one per sub-folder, each calibrated from its "
                             "own pictures (default: tests/data/vision-other)")
    vision.set_defaults(func=cmd_bench_vision)


def _layout(given: str | None) -> Layout:
    """``--layout``: a zone layout TOML, by default the shipped one (a ConfigError names what is wrong)."""
    from calibration import geometry
    from firmware_host import data
    if given:
        return geometry.load_layout(given)
    with data.path(data.CAMERA_LAYOUT) as path:
        return geometry.load_layout(path)


def _read(path: str | Path) -> np.ndarray:
    import cv2
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise FileNotFoundError(f"cannot read image {path}")
    return image


def _camera(args: argparse.Namespace) -> tuple[Layout, str]:
    """The layout and the camera's name (``--camera``, default the layout's first camera)."""
    layout = _layout(args.layout)
    name = args.camera or layout.cameras[0].name
    layout.mount(name)  # a ConfigError naming the cameras if there is no such camera
    return layout, name


def expected_markers(layout: Layout, name: str) -> list[int]:
    """The markers camera *name* should see from its nominal mount (whole, in the picture)."""
    from calibration.mount import mount_camera
    camera, (w, h) = mount_camera(layout, name), layout.mount(name).size
    out: list[int] = []
    for marker in layout.markers:
        uv = camera.project(np.hstack([marker.corners(), np.zeros((4, 1))]))
        if (uv >= 0).all() and (uv[:, 0] < w).all() and (uv[:, 1] < h).all():
            out.append(marker.id)
    return out


def cmd_calibrate_table(args: argparse.Namespace) -> int:
    """Markers -> camera; writes the calibration file and the annotated picture."""
    import cv2

    from calibration.geometry import LENS_MIN_MARKERS, CalibrationError, calibrate_table, draw_calibration, intrusions
    from firmware_host.configfile import ConfigError
    from firmware_host.vision.counter import out_of_picture
    try:
        layout, name = _camera(args)
        image = _read(corpus(args.image, f"{EVALUATION_SET}/table_{name}.jpg", "--image"))
        calib = calibrate_table(image, layout, name)
    except (ConfigError, CalibrationError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.out or f"camera-{name}-table.json"
    picture = args.picture or f"camera-{name}-table.jpg"
    calib.save(out)
    cv2.imwrite(picture, draw_calibration(image, calib))
    expected = expected_markers(layout, name)
    missing = sorted(set(expected) - set(calib.markers_seen))
    print(f"camera {name}: markers seen: {len(calib.markers_seen)}/{len(expected)} {list(calib.markers_seen)}"
          + (f"  (expected but not seen: {missing}: covered or dirty?)" if missing else ""))
    print(f"reprojection: {calib.rms_px:.2f} px   focal: {calib.camera.K[0, 0]:.0f} px   "
          f"camera at {', '.join(f'{c:.0f}' for c in calib.camera.position())} mm   "
          + (f"blur: {calib.blur_px:.2f} px (sigma, on the markers' edges)" if calib.blur_px is not None
             else "blur: not measured (no marker edge clear enough)"))
    for zone in calib.layout.zones:
        if zone.kind in ("bet", "pot"):
            x, y = [sum(c) / len(c) for c in zip(*zone.polygon)]
            a, b = calib.camera.project(np.array([[x, y, 0.0], [x, y, 10 * layout.chip_thickness]]))
            print(f"  {zone.name:6} chip {calib.chip_diameter_px(x, y):5.1f} px wide, "
                  f"{(a[1] - b[1]) / 10:.2f} px per chip layer")
    if not calib.lens_checked:
        print(f"warning: {len(calib.markers_seen)} markers are too few to fit the lens (need {LENS_MIN_MARKERS}): "
              "a pinhole is assumed, not measured; a lens that bends the picture would skew heights near its "
              "edges: uncover or clean the missing markers and calibrate again", file=sys.stderr)
    for what in out_of_picture(calib):
        print(f"warning: {what}; aim the camera so that it sees it whole, then calibrate again", file=sys.stderr)
    for behind, what in intrusions(calib):
        print(f"warning: {what} lies behind zone {behind} in this camera's view: a tall stack there would "
              f"merge with it; move it in {args.layout or 'the layout (--layout)'}", file=sys.stderr)
    print(f"wrote {out} and {picture}")
    return 0


def _parse_show(text: str) -> tuple[int, str]:
    value, sep, path = text.partition("=")
    if not sep or not value.isdigit():
        raise SystemExit(f"error: --show expects VALUE=IMAGE, not {text!r}")
    return int(value), path


def cmd_calibrate_chips(args: argparse.Namespace) -> int:
    """One picture per denomination (chips in the pot) -> colour models; look-alike pairs are said."""
    import cv2

    from calibration.geometry import draw_calibration, load_calibration
    from firmware_host.vision import counter as vision
    from firmware_host.vision.stack import INLAY_MIN
    try:
        calib = load_calibration(args.table)
    except (OSError, ValueError) as exc:
        print(f"error: {exc} (run `tablectl calibrate table` first)", file=sys.stderr)
        return 2
    name = calib.layout.camera
    if not args.show:
        pictures = corpus(None, EVALUATION_SET, "--show").glob(f"chips_{name}_*.jpg")
        args.show = [f"{p.stem.split('_')[-1]}={p}" for p in sorted(pictures, key=lambda p: int(p.stem.split("_")[-1]))]
    shows = dict(_parse_show(s) for s in args.show)
    expected = {c.value for c in profile(args.profile).chips} if args.profile else set(shows)
    if set(shows) != expected:
        print(f"error: the chip set of profile {args.profile} is {sorted(expected)}; shown {sorted(shows)}",
              file=sys.stderr)
        return 2
    images = {v: _read(p) for v, p in shows.items()}
    try:
        models = vision.learn_chips(calib, images, args.zone)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.out or f"camera-{name}-chips.json"
    models.save(out)
    for line in models.alike_text() + models.hidden_text():
        print(f"warning: {line} (calibrate in better light, or change the chip set)", file=sys.stderr)
    for value, n in sorted(models.left_out.items()):
        if n:
            print(f"  {value:5}: {n} chip(s) left out of its colour model: far from the other {value} chips "
                  "(another colour, a shadow or a reflection on it?)")
    for value, (on, found) in sorted(models.on_print.items()):
        if found - on >= vision.PRINT_CLEAN:
            print(f"  {value:5}: {on} chip(s) on the felt's print left out of its side and edge models")
        else:
            print(f"warning: {value}: {on} of its {found} chips stand on the felt's print (its colour on their edges):"
                  " too few off it, all kept; place the chips off the printed lines and calibrate again",
                  file=sys.stderr)
    if models.side_alike:
        print("sides alike (a stack whose side shows one of these under another denomination is left uncertain): "
              + ", ".join(f"{a} and {b} ({sep:.1f})" for a, b, sep in models.side_alike))
    print("colour card: " + ("seen: each frame's colours are corrected to this light on it" if models.card
                             else f"not used ({models.card_note}): the white patch alone normalises the light"))
    counter = vision.ChipCounter(calib, models)
    sheet = []
    for value, image in sorted(images.items()):
        picture = draw_calibration(image, calib)
        result = counter.count(image)
        for zc in result.zones.values():
            for st in zc.stacks:
                u, v = calib.camera.project(np.array([[st.x, st.y, 0.0]]))[0]
                label = f"{st.count}x{st.value}" if st.value else "?"
                cv2.putText(picture, label, (int(u) - 22, int(v) + 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6,
                            (255, 255, 255), 2, cv2.LINE_AA)
        right = sum(st.value == value for zc in result.zones.values() for st in zc.stacks)
        shown = sum(len(zc.stacks) for zc in result.zones.values())
        colour = (f"colour {tuple(round(c, 3) for c in models.chips[value].mean)}" if value in models.chips
                  else "no chip found (looks like the felt)")
        print(f"  {value:5}: {colour}, {right}/{shown} chips recognised back as {value}")
        cv2.putText(picture, f"shown: {value}", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 3,
                    cv2.LINE_AA)
        sheet.append(cv2.resize(picture, (640, 360), interpolation=cv2.INTER_AREA))
    if len(sheet) % 2:
        sheet.append(sheet[0] * 0)
    contact_sheet = args.picture or f"camera-{name}-chips.jpg"
    cv2.imwrite(contact_sheet, cv2.vconcat([cv2.hconcat(sheet[i:i + 2]) for i in range(0, len(sheet), 2)]))
    print("edge bias (px a single chip's silhouette measures beyond its geometry): "
          + ", ".join(f"{v}: {b:+.2f}" for v, b in sorted(models.edge_bias.items())))
    print("edge spread (px the single chips stray from it; a stack's height carries it): "
          + ", ".join(f"{v}: {s:.2f}" for v, s in sorted(models.edge_spread.items())))
    print("inlay (how much brighter a chip's centre than its face; under "
          f"{INLAY_MIN} its stacks are never counted against a card of their colour): "
          + ", ".join(f"{v}: {c:.2f}" for v, c in sorted(models.inlay.items())))
    print(f"camera {name}: wrote {out} and {contact_sheet}")
    return 0


def _print_why(tallies: list[tuple[str, dict[str, Any]]]) -> None:
    """Why zone-frames were uncertain, per tag (``uncertain_why``), then what each reason means."""
    from firmware_host.vision.results import WHY
    seen = [(tag, f["uncertain_why"]) for tag, f in tallies if f.get("uncertain_why")]
    if not seen:
        return
    print("uncertain zone-frames by reason (shares of the zone-frames; one zone-frame may have several):")
    for tag, why in seen:
        print(f"  {tag:22} " + ", ".join(f"{w} {share:.2%}" for w, share in why.items()))
    used = {w for _, why in seen for w in why}
    print("  (" + "; ".join(f"{w}: {text}" for w, text in WHY.items() if w in used) + ")")


def _print_figures(figures: dict[str, Any]) -> None:
    """The four shares overall and per tag, then the calibration of each camera."""
    def row(name: str, f: dict[str, Any]) -> str:
        return (f"  {name:22} {f['zone_frames']:6}  {f['exact_share']:7.2%}  {f['uncertain_share']:9.2%}  "
                f"{f['unreadable_share']:10.2%}  {f['wrong_share']:6.2%}  {f['covered_zone_frames']:7}  "
                f"{f['covered_wrong']:5}  {f['covered_stable']:6}  {f['stable']:6}  {f['stable_wrong']:5}")
    for name, cal in figures["calibration"].items():
        print(f"camera {name}: {'calibrated' if cal['ok'] else 'NOT CALIBRATED'}: {cal['note']}")
    print(f"{figures['frames']} frames, {figures['sequences']} sequences; zone-frames without an arm over them:")
    print(f"  {'tag':22} {'zones':>6}  {'exact':>7}  {'uncertain':>9}  {'unreadable':>10}  {'WRONG':>6}  "
          f"{'covered':>7}  {'wrong':>5}  {'stable':>6}  {'stable':>6}  {'wrong':>5}")
    for tag, f in figures["tags"].items():
        print(row(tag, f))
    print(row("all", figures))
    print("(exact, uncertain, unreadable, WRONG: shares of the zone-frames without an arm; covered: zone-frames "
          "with one, then those counted wrong with confidence and those held stable (both must be 0); stable: "
          f"zone-frames without an arm stable after {figures['stable_frames']} still frames, wrong: stable with a "
          "wrong amount)")
    _print_why([*figures["tags"].items(), ("all", figures)])
    if figures["behind_share"]:
        print(f"uncertain only because a chip could lie wholly hidden behind a stack (no picture from that camera "
              f"would show it): {figures['behind_share']:.2%} of zone-frames, {figures['behind_right_share']:.2%} "
              "with the amount read right")
    if figures["witnessed_share"]:
        print(f"counted with confidence where a chip could hide, another camera's frame of the same moment (scene) "
              f"showing the felt bare there: {figures['witnessed_share']:.2%} of zone-frames, "
              f"{figures['witnessed_wrong']} of them wrong")
    if figures["stacks_counted"]:
        print(f"stacks counted with confidence where the labels place one: {figures['stacks_counted']}, "
              f"{figures['stacks_wrong']} holding other chips (in a zone left uncertain by another stack; alone "
              "in a zone, a wrong count)")


def cmd_vision_evaluate(args: argparse.Namespace) -> int:
    """Calibrate each camera from the set's pictures (or ``--calibration``'s), count every frame."""
    from firmware_host.vision.evaluation import EvalSetError, evaluate, load_calibration_block, load_set
    try:
        evalset = load_set(args.dir)
        pictures = (load_calibration_block(args.calibration, evalset.layout, evalset.values)
                    if args.calibration else None)
    except EvalSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    figures = {**evaluate(evalset, pictures, args.frames), "stable_frames": args.frames}
    _print_figures(figures)
    print(json.dumps(figures))
    return 0


def _speed(counters: dict[str, Any], frames: list[tuple[str, np.ndarray]]) -> float:
    """Seconds per frame on one core: the median of three passes."""
    import cv2
    cv2.setNumThreads(1)
    passes = []
    for _ in range(3):
        start, previous = time.perf_counter(), None
        for camera, image in frames:
            counters[camera].count(image, previous)
            previous = image
        passes.append((time.perf_counter() - start) / len(frames))
    cv2.setNumThreads(-1)
    return sorted(passes)[1]


def bench(data: Path, frames: int, made: Made) -> dict[str, Any]:
    """``vision evaluate`` on the committed set, plus what only its labels hold (card areas, each
    stack's place: the denomination confusion) and the speed on one core; *made*: the calibrations made."""
    from firmware_host.vision.evaluation import calibrate_cameras, evaluate, load_set, read_picture
    evalset = load_set(data)
    calibrated = calibrate_cameras(evalset, None, made)
    figures: dict[str, Any] = {"bench": "vision", **evaluate(evalset, None, frames, calibrated),
                               "stable_frames": frames}
    counters = {}
    for name, cal in calibrated.items():
        if cal.counter is None:
            raise OSError(f"{data}: camera {name}: {cal.note}")
        counters[name] = cal.counter
    values = list(evalset.values)
    confusion = {t: {p: 0 for p in values + ["none"]} for t in values}
    cards = cards_right = 0
    images = [(f.camera, read_picture(f.file)) for f in evalset.frames]
    previous = None
    for frame, (camera, image) in zip(evalset.frames, images):
        result = counters[camera].count(image, previous)
        previous = image
        for name, truth in frame.zones.items():
            for (x, y), stack in zip(truth.at or (), truth.stacks):
                near = [s for s in result.zones[name].stacks if abs(s.x - x) < 20 and abs(s.y - y) < 20]
                confusion[stack[-1]][near[0].value if near and near[0].value else "none"] += 1
        for zone, face_up in frame.cards:
            cards += 1
            seen = result.cards[zone]
            cards_right += seen.present and seen.face_up == face_up
    per_frame = _speed(counters, images)
    figures.update({"cards_share": round(cards_right / max(cards, 1), 4),
                    "fps_per_core": round(1 / per_frame, 1), "ms_per_frame": round(per_frame * 1000, 2),
                    "confusion": {str(t): {str(p): n for p, n in row.items()} for t, row in confusion.items()}})
    return figures


def physical(root: Path, frames: int, made: Made) -> dict[str, Any]:
    """``vision evaluate`` on each set under *root* (the physically based renderer's sessions), and the
    speed on one core on its frames when every camera was calibrated: session -> its figures."""
    from firmware_host.vision.evaluation import calibrate_cameras, evaluate, load_set, read_picture
    out = {}
    for d in sorted(root.iterdir()):
        if not (d / "labels.json").is_file():
            continue
        evalset = load_set(d)
        calibrated = calibrate_cameras(evalset, None, made)
        out[d.name] = {**evaluate(evalset, None, frames, calibrated), "stable_frames": frames}
        counters = {name: c.counter for name, c in calibrated.items()}
        if all(c is not None for c in counters.values()):
            per_frame = _speed(counters, [(f.camera, read_picture(f.file)) for f in evalset.frames])
            out[d.name].update({"fps_per_core": round(1 / per_frame, 1), "ms_per_frame": round(per_frame * 1000, 2)})
    return out


def cross_light(root: Path, frames: int, made: Made) -> dict[str, Any]:
    """``vision evaluate --calibration`` across the sessions under *root* that share a felt (their
    ``felt-*`` tag) but not a light: ``"FRAMES<-CALIBRATION"`` -> the shares (a light the
    calibration did not see)."""
    from firmware_host.vision.evaluation import calibrate_cameras, evaluate, load_set
    sets = {d.name: load_set(d) for d in sorted(root.iterdir()) if (d / "labels.json").is_file()}
    felt = {name: {t for frame in s.frames for t in frame.tags if t.startswith("felt-")} for name, s in sets.items()}
    return {f"{a}<-{b}": _shares(evaluate(sets[a], None, frames, calibrate_cameras(sets[a], sets[b].calibration, made)))
            for a in sets for b in sets if a != b and felt[a] and felt[a] == felt[b]}


def retake(root: Path, first: Path, frames: int, made: Made) -> dict[str, Any]:
    """Each set under *root*, another take of a session under *first* (its labels' ``session``: the same
    light, chips and felt; other scenes and noise): from its own pictures, then calibrated from the first
    take's pictures and the other way (what an installation sees on the days after its calibration):
    ``"retake/DIR"``, ``"retake/DIR<-SESSION"``, ``"SESSION<-retake/DIR"`` -> the shares."""
    from firmware_host.vision.evaluation import calibrate_cameras, evaluate, load_set
    out: dict[str, Any] = {}
    for d in sorted(root.iterdir()):
        if not (d / "labels.json").is_file():
            continue
        session = json.loads((d / "labels.json").read_text(encoding="utf-8")).get("session")
        if not isinstance(session, str) or not (first / session / "labels.json").is_file():
            continue
        again, once = load_set(d), load_set(first / session)
        for key, frames_of, pictures in ((f"retake/{d.name}", again, None),
                                         (f"retake/{d.name}<-{session}", again, once.calibration),
                                         (f"{session}<-retake/{d.name}", once, again.calibration)):
            out[key] = _shares(evaluate(frames_of, None, frames, calibrate_cameras(frames_of, pictures, made)))
    return out


def others(root: Path, frames: int, made: Made) -> dict[str, Any]:
    """Each set under *root* (another felt, another maker's chips) from its own pictures: ``"other/DIR"`` ->
    the shares."""
    from firmware_host.vision.evaluation import calibrate_cameras, evaluate, load_set
    sets = [(d.name, load_set(d)) for d in sorted(root.iterdir()) if (d / "labels.json").is_file()]
    return {f"other/{name}": _shares(evaluate(s, None, frames, calibrate_cameras(s, None, made))) for name, s in sets}


def _shares(figures: dict[str, Any]) -> dict[str, Any]:
    """An evaluation's zone-frames, its four shares and its stacks counted with confidence (and wrong)."""
    return {k: figures[k] for k in ("zone_frames", "exact_share", "uncertain_share", "unreadable_share", "wrong_share",
                                    "stacks_counted", "stacks_wrong", "behind_share")}


def _print_pairs(title: str, pairs: dict[str, Any]) -> None:
    """*title*, then one line per evaluation of *pairs* (``_shares``)."""
    print(title)
    for pair, t in pairs.items():
        print(f"  {pair:36} {t['zone_frames']:6}  {t['exact_share']:7.2%}  {t['uncertain_share']:9.2%}  "
              f"{t['unreadable_share']:10.2%}  {t['wrong_share']:6.2%}  stacks {t['stacks_counted']:4} "
              f"wrong {t['stacks_wrong']}  behind {t['behind_share']:.1%}")


def _print_physical(sessions: dict[str, Any]) -> None:
    """One line per session and tag (the shares), then the calibrations' notes."""
    print("physically based sessions (firmware_host.sim.physical: path-traced, not by the counter's renderer):")
    print(f"  {'session':16} {'tag':14} {'zones':>6}  {'exact':>7}  {'uncertain':>9}  {'unreadable':>10}  {'WRONG':>6}")
    for name, f in sessions.items():
        for tag, t in [*f["tags"].items(), ("all", f)]:
            print(f"  {name:16} {tag:14} {t['zone_frames']:6}  {t['exact_share']:7.2%}  {t['uncertain_share']:9.2%}  "
                  f"{t['unreadable_share']:10.2%}  {t['wrong_share']:6.2%}")
        if f.get("uncertain_why"):
            print(f"  {name:16} uncertain by reason: "
                  + ", ".join(f"{w} {share:.2%}" for w, share in f["uncertain_why"].items()))
        print(f"  {name:16} stacks counted with confidence where the labels place one: {f['stacks_counted']}, "
              f"{f['stacks_wrong']} holding other chips; uncertain only as a chip could hide behind a stack: "
              f"{f['behind_share']:.2%}")
        for camera, cal in f["calibration"].items():
            print(f"  {name:16} camera {camera}: {'calibrated' if cal['ok'] else 'NOT CALIBRATED'}: {cal['note']}")
        if "fps_per_core" in f:
            print(f"  {name:16} speed (1 core): {f['fps_per_core']} frames/s ({f['ms_per_frame']} ms/frame)")


def cmd_bench_vision(args: argparse.Namespace) -> int:
    made: Made = {}  # each camera calibrated once from the same pictures
    f = bench(corpus(args.data, EVALUATION_SET, "--data"), args.frames, made)
    try:
        root: Path | None = corpus(args.physical, PHYSICAL_SETS, "--physical")
    except FileNotFoundError:  # an installed tablectl: no physically based sets unless given
        root = None
    sessions = physical(root, args.frames, made) if root is not None else {}
    f["physical"] = {name: {k: v for k, v in s.items() if k in ("zone_frames", "exact_share", "uncertain_share",
                                                                  "unreadable_share", "wrong_share", "tags",
                                                                  "stacks_counted", "stacks_wrong", "behind_share",
                                                                  "uncertain_why", "fps_per_core", "ms_per_frame")}
                     for name, s in sessions.items()}
    f["cross_light"] = cross_light(root, args.frames, made) if root is not None else {}
    try:
        again: Path | None = corpus(args.retake, RETAKE_SETS, "--retake")
    except FileNotFoundError:
        again = None
    f["retake"] = retake(again, root, args.frames, made) if again is not None and root is not None else {}
    try:
        other: Path | None = corpus(args.other, OTHER_SETS, "--other")
    except FileNotFoundError:
        other = None
    f["other"] = others(other, args.frames, made) if other is not None else {}
    _print_figures(f)
    print(f"face-up cards:         {f['cards_share']:.2%} of card areas right")
    print(f"speed (1 core):        {f['fps_per_core']} frames/s ({f['ms_per_frame']} ms/frame, 1280x720)")
    print("denomination confusion (rows: truth, columns: seen; 'none' = not found or unknown):")
    cols = list(next(iter(f["confusion"].values())))
    print("        " + "".join(f"{c:>7}" for c in cols))
    for t, row in f["confusion"].items():
        print(f"  {t:>5} " + "".join(f"{row[c]:>7}" for c in cols))
    if sessions:
        _print_physical(sessions)
    if f["cross_light"]:
        _print_pairs("calibrated in another session's light (same felt): frames <- calibration", f["cross_light"])
    if f["retake"]:
        _print_pairs("another take of a session (same light, other scenes): own pictures, then frames <- calibration",
                     f["retake"])
    if f["other"]:
        _print_pairs("another felt or another maker's chips: own pictures", f["other"])
    print(json.dumps(f))
    return 0
