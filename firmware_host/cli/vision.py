"""The chip cameras: ``tablectl calibrate table``, ``calibrate chips`` and ``bench vision``."""
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

EVALUATION_SET = "tests/data/vision"


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

    vision = parsers.bench.add_parser("vision", help="chip counting on the committed evaluation set")
    vision.add_argument("--data", default=None, help="the evaluation set (default: tests/data/vision)")
    vision.add_argument("--frames", type=int, default=3, help="frames a count must hold to be stable")
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

    from calibration.geometry import CalibrationError, calibrate_table, draw_calibration, intrusions
    from firmware_host.configfile import ConfigError
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
          f"camera at {', '.join(f'{c:.0f}' for c in calib.camera.position())} mm")
    for zone in calib.layout.zones:
        if zone.kind in ("bet", "pot"):
            x, y = [sum(c) / len(c) for c in zip(*zone.polygon)]
            a, b = calib.camera.project(np.array([[x, y, 0.0], [x, y, 10 * layout.chip_thickness]]))
            print(f"  {zone.name:6} chip {calib.chip_diameter_px(x, y):5.1f} px wide, "
                  f"{(a[1] - b[1]) / 10:.2f} px per chip layer")
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
    """One picture per denomination (chips in the pot) -> colour models; refuses confusable sets."""
    import cv2

    from calibration.chips import ConfusableColours
    from calibration.geometry import draw_calibration, load_calibration
    from firmware_host.vision import counter as vision
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
    except ConfusableColours as exc:
        print(f"error: refused: {exc}", file=sys.stderr)
        return 3
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = args.out or f"camera-{name}-chips.json"
    models.save(out)
    counter = vision.Counter(calib, models)
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
        print(f"  {value:5}: colour {tuple(round(c, 3) for c in models.chips[value].mean)}, "
              f"{right}/{shown} chips recognised back as {value}")
        cv2.putText(picture, f"shown: {value}", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (255, 255, 255), 3,
                    cv2.LINE_AA)
        sheet.append(cv2.resize(picture, (640, 360), interpolation=cv2.INTER_AREA))
    if len(sheet) % 2:
        sheet.append(sheet[0] * 0)
    contact_sheet = args.picture or f"camera-{name}-chips.jpg"
    cv2.imwrite(contact_sheet, cv2.vconcat([cv2.hconcat(sheet[i:i + 2]) for i in range(0, len(sheet), 2)]))
    print("edge bias (px a single chip's silhouette measures beyond its geometry): "
          + ", ".join(f"{v}: {b:+.2f}" for v, b in sorted(models.edge_bias.items())))
    print("inlay (how much brighter a chip's centre than its face; under "
          f"{vision.INLAY_MIN} its stacks are never counted against a card of their colour): "
          + ", ".join(f"{v}: {c:.2f}" for v, c in sorted(models.inlay.items())))
    print(f"camera {name}: wrote {out} and {contact_sheet}")
    return 0


def evaluate(data: Path, frames: int = 3) -> dict[str, Any]:
    """Calibrate on the committed pictures, then count every evaluation frame; figures as a dict."""
    import cv2

    from calibration.geometry import calibrate_table
    from firmware_host.vision import counter as vision
    from firmware_host.vision.stability import Stability
    labels = json.loads((data / "labels.json").read_text())
    layout = _layout(None)
    values = sorted(int(v) for v in labels["colours"])
    calibs, counters, models = {}, {}, {}
    for name in labels["cameras"]:  # each camera calibrated on its own pictures, as installed
        calibs[name] = calibrate_table(_read(data / f"table_{name}.jpg"), layout, name)
        models[name] = vision.learn_chips(calibs[name], {v: _read(data / f"chips_{name}_{v}.jpg") for v in values})
        counters[name] = vision.Counter(calibs[name], models[name])
    images = [_read(data / f["file"]) for f in labels["frames"]]

    exact = visible = occluded_ok = occluded = wrong_stable = uncertain = blocked = emitted = emitted_right = 0
    stable = stable_right = held_uncertain = arm_wrong = 0
    cards_right = cards = 0
    confusion = {t: {p: 0 for p in values + ["none"]} for t in values}
    stability, previous, scene = Stability(frames), None, None
    for frame, image in zip(labels["frames"], images):
        if (frame["camera"], frame["scene"]) != scene:
            scene, stability, previous = (frame["camera"], frame["scene"]), Stability(frames), None
        result = counters[frame["camera"]].count(image, previous)
        observations = {o.zone: o for o in stability.feed(frame["t"], result)}
        previous = image
        for name, truth in frame["zones"].items():
            zc = result.zones[name]
            if truth["occluded"]:
                occluded += 1
                occluded_ok += zc.status == "occluded"
                arm_wrong += zc.status == "ok" and zc.amount != truth["amount"]
                wrong_stable += stability.state(name) == "stable" or name in observations
                continue
            visible += 1
            if stability.state(name) == "stable":
                stable += 1
                stable_right += sum(v * n for v, n in stability.reported(name) or ()) == truth["amount"]
            held_uncertain += stability.state(name) == "uncertain"
            uncertain += zc.status == "uncertain"
            blocked += zc.status == "occluded"
            exact += zc.status == "ok" and zc.amount == truth["amount"]
            if name in observations:
                emitted += 1
                emitted_right += observations[name].amount == truth["amount"]
            for x, y, value, _ in truth["stacks"]:
                near = [s for s in zc.stacks if abs(s.x - x) < 20 and abs(s.y - y) < 20]
                confusion[value][near[0].value if near and near[0].value else "none"] += 1
        for zone, face_up in frame["cards"]:
            cards += 1
            seen = result.cards[zone]
            cards_right += seen.present and seen.face_up == face_up
    cv2.setNumThreads(1)  # one core
    passes = []
    for _ in range(3):  # the median of three passes over the frames
        start, previous = time.perf_counter(), None
        for frame, image in zip(labels["frames"], images):
            counters[frame["camera"]].count(image, previous)
            previous = image
        passes.append((time.perf_counter() - start) / len(images))
    per_frame = sorted(passes)[1]
    cv2.setNumThreads(-1)
    return {
        "bench": "vision", "frames": len(images), "zone_frames_visible": visible,
        "exact_share": round(exact / visible, 4), "uncertain_share": round(uncertain / visible, 4),
        "occluded_share": round(blocked / visible, 4),
        "wrong_share": round((visible - exact - uncertain - blocked) / visible, 4),
        "zone_frames_occluded": occluded, "occluded_reported_share": round(occluded_ok / max(occluded, 1), 4),
        "wrong_while_occluded": arm_wrong,
        "wrongly_stable_while_occluded": wrong_stable,
        "observations": emitted, "observations_right": emitted_right,
        "stable_share": round(stable / visible, 4), "stable_exact_share": round(stable_right / max(stable, 1), 4),
        "held_uncertain_share": round(held_uncertain / visible, 4),
        "cards_share": round(cards_right / max(cards, 1), 4),
        "fps_per_core": round(1 / per_frame, 1), "ms_per_frame": round(per_frame * 1000, 2),
        "confusion": {str(t): {str(p): n for p, n in row.items()} for t, row in confusion.items()},
        "cameras": list(labels["cameras"]),
        "calibration_rms_px": {n: round(c.rms_px, 3) for n, c in calibs.items()},
        "edge_bias_px": {n: {str(v): round(b, 3) for v, b in sorted(m.edge_bias.items())} for n, m in models.items()},
        "inlay": {n: {str(v): round(c, 3) for v, c in sorted(m.inlay.items())} for n, m in models.items()},
    }


def cmd_bench_vision(args: argparse.Namespace) -> int:
    figures = evaluate(corpus(args.data, EVALUATION_SET, "--data"), args.frames)
    f = figures
    print(f"evaluation set:        {f['frames']} frames 1280x720 from {len(f['cameras'])} cameras "
          f"({', '.join(f['cameras'])}), {f['zone_frames_visible']} visible zone-frames, "
          f"{f['zone_frames_occluded']} with an arm over the zone")
    print(f"amount exact, 1 frame: {f['exact_share']:.2%}  (low confidence: {f['uncertain_share']:.2%}; "
          f"unreadable, nothing over the zone: {f['occluded_share']:.2%}; wrong and confident: {f['wrong_share']:.2%})")
    print(f"arm over zone:         reported occluded {f['occluded_reported_share']:.2%} (else counted beside the arm); "
          f"wrong and confident: {f['wrong_while_occluded']}; wrongly stable: {f['wrongly_stable_while_occluded']} "
          "(must be 0)")
    print(f"observations:          {f['observations']} ChipsInZone, {f['observations_right']} right")
    print(f"after {args.frames} still frames:  {f['stable_share']:.2%} of zone-frames stable, of which "
          f"{f['stable_exact_share']:.2%} exact; {f['held_uncertain_share']:.2%} held but uncertain (dealer asked)")
    print(f"face-up cards:         {f['cards_share']:.2%} of card areas right")
    print(f"speed (1 core):        {f['fps_per_core']} frames/s ({f['ms_per_frame']} ms/frame)")
    print("denomination confusion (rows: truth, columns: seen; 'none' = not found or unknown):")
    cols = list(next(iter(f["confusion"].values())))
    print("        " + "".join(f"{c:>7}" for c in cols))
    for t, row in f["confusion"].items():
        print(f"  {t:>5} " + "".join(f"{row[c]:>7}" for c in cols))
    print(json.dumps(figures))
    return 0
