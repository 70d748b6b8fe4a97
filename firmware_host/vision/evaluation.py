"""The chip counter measured on a labelled set of pictures (``tablectl vision evaluate DIR``).

A set is a directory holding ``labels.json`` (format ``pokertable-vision-eval/1``, see
``docs/vision.md``), the calibration pictures of each camera and the frames. Each camera is
calibrated from its pictures as an installer does it (``calibrate table``, then ``calibrate
chips``), every frame is counted, and each labelled zone-frame falls in exactly one class:

- ``exact``: counted with confidence, the amount right;
- ``uncertain``: reported uncertain (the dealer is asked);
- ``unreadable``: reported occluded or unreadable with nothing over it (or its camera's
  calibration was refused);
- ``wrong``: counted with confidence, the amount wrong: the figure that must stay at 0.

A zone an arm covers (``covered``) is left out of these shares; only a confident wrong count
there is counted. Frames of one ``sequence`` go through :class:`Stability` in order: how
many zone-frames became stable, how many of those were right, and how many wrong.

Loading checks the whole set first: a damaged labels file or a missing picture is one
:class:`EvalSetError` naming the file and the key, before anything is counted.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from calibration.geometry import Layout, load_layout
from firmware_host.configfile import ConfigError

if TYPE_CHECKING:
    from firmware_host.vision.counter import ChipCounter
    from firmware_host.vision.results import StackSeen
    from firmware_host.vision.witness import Witness

__all__ = ["FORMAT", "Calibrated", "CameraPictures", "EvalSet", "EvalSetError", "FrameLabel", "Tally", "ZoneTruth",
           "calibrate_camera", "calibrate_cameras", "evaluate", "load_calibration_block", "load_set",
           "stack_wrong"]

FORMAT = "pokertable-vision-eval/1"
CLASSES = ("exact", "uncertain", "unreadable", "wrong")


class EvalSetError(ValueError):
    """The set cannot be evaluated: names the file and the key."""

    def __init__(self, file: Path | str, key: str, message: str) -> None:
        self.file, self.key = str(file), key
        super().__init__(f"{file}: {key}: {message}" if key else f"{file}: {message}")


@dataclass(frozen=True)
class ZoneTruth:
    """What a chip zone holds in a frame: stacks bottom to top, their amount, whether an arm covers it.
    ``at``: each stack's base (mm), when the labels give it (the committed set does); ``kinds``: the
    kinds of stack the zone holds (``plain``, ``leaning``, ``mixed``, ``touching``...), when given:
    figures per kind (tag ``stacks:KIND``)."""

    amount: int
    stacks: tuple[tuple[int, ...], ...]
    covered: bool
    at: tuple[tuple[float, float], ...] | None = None
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class FrameLabel:
    file: Path
    camera: str
    sequence: str
    tags: tuple[str, ...]
    zones: dict[str, ZoneTruth]
    t: float | None = None  # seconds, when the labels give it
    cards: tuple[tuple[str, bool], ...] = ()  # (card area, face up) of the cards lying there, when given
    scene: str | None = None  # frames of other cameras with the same scene were taken at the same moment


@dataclass(frozen=True)
class CameraPictures:
    """A camera's calibration pictures: the table (one or more), one picture of single chips per value."""

    table: tuple[Path, ...]
    chips: dict[int, Path]


@dataclass(frozen=True)
class EvalSet:
    root: Path
    layout: Layout
    values: tuple[int, ...]
    calibration: dict[str, CameraPictures]
    frames: tuple[FrameLabel, ...]


def _read_labels(root: Path) -> tuple[Path, dict[str, Any]]:
    file = root / "labels.json"
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalSetError(file, "", "not found (an evaluation set is a directory with labels.json)") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvalSetError(file, "", f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise EvalSetError(file, "", "expected a JSON object")
    if data.get("format") != FORMAT:
        raise EvalSetError(file, "format", f"expected {FORMAT!r}, not {data.get('format')!r}")
    return file, data


def _picture(root: Path, file: Path, key: str, value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise EvalSetError(file, key, f"expected a picture's path relative to {root}, not {value!r}")
    path = root / value
    if not path.is_file():
        raise EvalSetError(file, key, f"picture {path} not found")
    if path.suffix.lower() in (".jpg", ".jpeg") and _cut_short(path.read_bytes()):
        raise EvalSetError(file, key, f"picture {path} is cut short (no end of image after its last scan): "
                                      "OpenCV would read its first part only and grey the rest")
    return path


def _cut_short(jpeg: bytes) -> bool:
    """Whether a JPEG file's bytes end before its image does: no end-of-image marker after its last
    start-of-scan (inside a scan 0xFF is always followed by 0x00 or a restart marker)."""
    return jpeg.rfind(b"\xff\xd9") < jpeg.rfind(b"\xff\xda")


def _layout(root: Path, file: Path, data: dict[str, Any]) -> Layout:
    name = data.get("layout")
    try:
        if name is None:
            from firmware_host import data as shipped
            with shipped.path(shipped.CAMERA_LAYOUT) as path:
                return load_layout(path)
        if not isinstance(name, str):
            raise EvalSetError(file, "layout", f"expected a TOML file's path, not {name!r}")
        return load_layout(_picture(root, file, "layout", name))
    except ConfigError as exc:
        raise EvalSetError(file, "layout", str(exc)) from None


def _values(file: Path, data: dict[str, Any]) -> tuple[int, ...]:
    from firmware_host.rules.profile import resolve_profile
    name = data.get("profile", "004")
    try:
        return tuple(sorted(c.value for c in resolve_profile(str(name)).chips))
    except (ConfigError, OSError) as exc:
        raise EvalSetError(file, "profile", str(exc)) from None


def _calibration(root: Path, file: Path, block: object, layout: Layout,
                 values: tuple[int, ...]) -> dict[str, CameraPictures]:
    if not isinstance(block, dict) or not block:
        raise EvalSetError(file, "calibration", "expected {camera: {table: [...], chips: {value: picture}}}")
    cameras = {c.name for c in layout.cameras}
    out = {}
    for name, pictures in block.items():
        key = f"calibration.{name}"
        if name not in cameras:
            raise EvalSetError(file, key, f"no camera {name!r} in the layout (cameras: {', '.join(sorted(cameras))})")
        if not isinstance(pictures, dict):
            raise EvalSetError(file, key, "expected {table: [...], chips: {...}}")
        table = pictures.get("table")
        if isinstance(table, str):
            table = [table]
        if not isinstance(table, list) or not table:
            raise EvalSetError(file, f"{key}.table", "expected a list of one or more pictures")
        chips = pictures.get("chips")
        if not isinstance(chips, dict):
            raise EvalSetError(file, f"{key}.chips", "expected {value: picture} for each chip value")
        if sorted(chips) != sorted(str(v) for v in values):
            raise EvalSetError(file, f"{key}.chips", f"expected one picture per chip value of the profile "
                               f"{list(values)}, not {sorted(chips, key=lambda v: (len(v), v))}")
        out[name] = CameraPictures(
            tuple(_picture(root, file, f"{key}.table[{i}]", p) for i, p in enumerate(table)),
            {int(v): _picture(root, file, f"{key}.chips.{v}", p) for v, p in chips.items()})
    return out


def _stacks(file: Path, key: str, value: object, values: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    if not isinstance(value, list) or not all(isinstance(s, list) and s for s in value):
        raise EvalSetError(file, key, "expected a list of stacks, each a non-empty list of chip values")
    for stack in value:
        for chip in stack:
            if chip not in values:
                raise EvalSetError(file, key, f"{chip!r} is not a chip value of the profile {list(values)}")
    return tuple(tuple(int(c) for c in s) for s in value)


def _zone(file: Path, key: str, value: object, values: tuple[int, ...]) -> ZoneTruth:
    if not isinstance(value, dict):
        raise EvalSetError(file, key, "expected {amount, stacks, covered}")
    stacks = _stacks(file, f"{key}.stacks", value.get("stacks"), values)
    amount, covered = value.get("amount"), value.get("covered", False)
    if type(amount) is not int or amount != sum(sum(s) for s in stacks):
        raise EvalSetError(file, f"{key}.amount", f"{amount!r} is not the sum of the stacks "
                           f"({sum(sum(s) for s in stacks)})")
    if not isinstance(covered, bool):
        raise EvalSetError(file, f"{key}.covered", f"expected true or false, not {covered!r}")
    at = value.get("at")
    if at is not None and not (isinstance(at, list) and len(at) == len(stacks)):
        raise EvalSetError(file, f"{key}.at", "expected one [x, y] (mm) per stack")
    kinds = value.get("kinds", [])
    if not (isinstance(kinds, list) and all(isinstance(k, str) for k in kinds)):
        raise EvalSetError(file, f"{key}.kinds", "expected a list of the kinds of stack in the zone (strings)")
    return ZoneTruth(amount, stacks, covered, tuple((float(x), float(y)) for x, y in at) if at else None,
                     tuple(kinds))


def _frame(root: Path, file: Path, i: int, value: object, layout: Layout, values: tuple[int, ...]) -> FrameLabel:
    key = f"frames[{i}]"
    if not isinstance(value, dict):
        raise EvalSetError(file, key, "expected an object")
    camera = value.get("camera")
    if camera not in {c.name for c in layout.cameras}:
        raise EvalSetError(file, f"{key}.camera", f"no camera {camera!r} in the layout")
    mount = layout.mount(camera)
    chip_zones = {z.name for z in layout.zones if z.kind in ("bet", "pot") and z.name in mount.zones}
    zones = value.get("zones")
    if not isinstance(zones, dict):
        raise EvalSetError(file, f"{key}.zones", "expected {zone: {amount, stacks, covered}}")
    for name in zones:
        if name not in chip_zones:
            raise EvalSetError(file, f"{key}.zones", f"{name!r} is not a chip zone camera {camera} counts "
                               f"({', '.join(sorted(chip_zones))})")
    tags = value.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise EvalSetError(file, f"{key}.tags", "expected a list of strings")
    t = value.get("t")
    cards = value.get("cards", [])
    scene = value.get("scene")
    if scene is not None and not isinstance(scene, str):
        raise EvalSetError(file, f"{key}.scene", "expected a string: frames of other cameras with the same scene "
                           "show the same moment")
    return FrameLabel(_picture(root, file, f"{key}.file", value.get("file")), camera,
                      str(value.get("sequence", f"{camera}-{i}")), tuple(tags),
                      {n: _zone(file, f"{key}.zones.{n}", z, values) for n, z in zones.items()},
                      float(t) if isinstance(t, (int, float)) else None,
                      tuple((str(z), bool(up)) for z, up in cards), scene)


def load_set(root: str | Path, frames: bool = True) -> EvalSet:
    """The set in *root*, checked whole (every picture there, every amount the sum of its stacks)."""
    root = Path(root)
    file, data = _read_labels(root)
    layout = _layout(root, file, data)
    values = _values(file, data)
    calibration = _calibration(root, file, data.get("calibration"), layout, values)
    listed = data.get("frames", [])
    if not isinstance(listed, list) or (frames and not listed):
        raise EvalSetError(file, "frames", "expected a non-empty list of frames")
    labels = tuple(_frame(root, file, i, f, layout, values) for i, f in enumerate(listed)) if frames else ()
    return EvalSet(root, layout, values, calibration, labels)


def load_calibration_block(root: str | Path, layout: Layout, values: Iterable[int]) -> dict[str, CameraPictures]:
    """Only the calibration pictures of the set in *root* (``--calibration DIR2``: another light, a retake)."""
    root = Path(root)
    file, data = _read_labels(root)
    return _calibration(root, file, data.get("calibration"), layout, tuple(sorted(values)))


@dataclass
class Tally:
    """Zone-frames by class, for one tag or the whole set."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    covered: int = 0
    covered_wrong: int = 0
    covered_occluded: int = 0
    covered_stable: int = 0
    stable: int = 0
    stable_right: int = 0
    stacks: int = 0  # stacks counted with confidence where the labels place a stack (``at``)
    stacks_wrong: int = 0  # ... whose chips are not that stack's
    behind_right: int = 0  # uncertain only as a chip could lie hidden behind a stack, the amount read right
    witnessed: int = 0  # counted with confidence where a chip could hide, another camera showing the felt bare
    witnessed_right: int = 0  # ... the amount right
    why: dict[str, int] = field(default_factory=dict)  # uncertain zone-frames per reason (``ZoneCount.why``)

    @property
    def zone_frames(self) -> int:
        return sum(self.counts.values())

    def shares(self) -> dict[str, float]:
        n = max(self.zone_frames, 1)
        return {f"{c}_share": round(self.counts[c] / n, 4) for c in CLASSES}

    def figures(self) -> dict[str, Any]:
        return {"zone_frames": self.zone_frames, **self.shares(), "covered_zone_frames": self.covered,
                "covered_wrong": self.covered_wrong, "covered_stable": self.covered_stable,
                "covered_occluded_share": round(self.covered_occluded / max(self.covered, 1), 4),
                "stable": self.stable, "stable_wrong": self.stable - self.stable_right,
                "stacks_counted": self.stacks, "stacks_wrong": self.stacks_wrong,
                "behind_share": round(self.why.get("behind", 0) / max(self.zone_frames, 1), 4),
                "behind_right_share": round(self.behind_right / max(self.zone_frames, 1), 4),
                "witnessed_share": round(self.witnessed / max(self.zone_frames, 1), 4),
                "witnessed_wrong": self.witnessed - self.witnessed_right,
                "uncertain_why": {w: round(n / max(self.zone_frames, 1), 4) for w, n in sorted(
                    self.why.items(), key=lambda item: -item[1])}}


def classify(status: str, amount: int, truth: ZoneTruth) -> str:
    """The class of one labelled zone-frame not covered: exact, uncertain, unreadable or wrong."""
    if status == "ok":
        return "exact" if amount == truth.amount else "wrong"
    return "uncertain" if status == "uncertain" else "unreadable"


def stack_wrong(seen: StackSeen, truth: ZoneTruth, reach: float) -> bool | None:
    """Whether a stack counted with confidence holds other chips than the labelled stack within *reach*
    (mm) of its base; None when it was not counted with confidence or no stack is labelled there. A zone
    whose other stacks are uncertain is uncertain: a stack read wrong there would be a wrong count alone."""
    from firmware_host.vision.results import MIN_CONFIDENCE
    if seen.confidence < MIN_CONFIDENCE or not seen.chips or not truth.at:
        return None
    far, j = min((float(np.hypot(seen.x - x, seen.y - y)), j) for j, (x, y) in enumerate(truth.at))
    return None if far > reach else sorted(seen.chips) != sorted(truth.stacks[j])


def read_picture(path: Path) -> np.ndarray:
    import cv2
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise EvalSetError(path, "", "not a picture OpenCV can read")
    return image


@dataclass
class Calibrated:
    """A camera calibrated from its pictures, or why not (then its frames are unreadable)."""

    camera: str
    counter: ChipCounter | None
    note: str
    figures: dict[str, Any] = field(default_factory=dict)


def calibrate_camera(layout: Layout, name: str, pictures: CameraPictures) -> Calibrated:
    """``calibrate table`` then ``calibrate chips`` on a camera's pictures, as an installer runs them;
    a refusal is kept as the reason, not raised."""
    from calibration.geometry import CalibrationError, calibrate_table
    from firmware_host.vision.counter import PRINT_CLEAN, ChipCounter, learn_chips, out_of_picture
    try:
        calib = calibrate_table([read_picture(p) for p in pictures.table], layout, name)
    except CalibrationError as exc:
        return Calibrated(name, None, f"calibrate table refused: {exc}")
    figures: dict[str, Any] = {"rms_px": round(calib.rms_px, 3), "markers": list(calib.markers_seen),
                               "distortion": [round(k, 4) for k in calib.camera.dist[:2]],
                               "lens_checked": calib.lens_checked,
                               "blur_px": None if calib.blur_px is None else round(calib.blur_px, 3)}
    try:
        models = learn_chips(calib, {v: read_picture(p) for v, p in pictures.chips.items()})
    except ValueError as exc:
        return Calibrated(name, None, f"calibrate chips refused: {exc}", figures)
    figures["left_out"] = {str(v): n for v, n in models.left_out.items() if n}
    figures["colour_card"] = models.card is not None
    figures["alike"] = [[a, b] for a, b, _ in models.alike]
    figures["hidden"] = [v for v, _, _ in models.hidden]
    figures["side_alike"] = [[a, b] for a, b, _ in models.side_alike]
    figures["edge_spread_px"] = {str(v): s for v, s in sorted(models.edge_spread.items())}
    note = (f"markers {len(calib.markers_seen)}, fit {calib.rms_px:.2f} px"
            + (f", blur {calib.blur_px:.2f} px" if calib.blur_px is not None else "")
            + (", lens k1 {:+.3f} k2 {:+.3f}".format(*calib.camera.dist) if calib.camera.distorted else "")
            + ("" if calib.lens_checked else ", lens not checked (too few markers: a pinhole assumed)")
            + ("; colour card seen" if models.card else f"; white patch only ({models.card_note})"))
    if models.alike:
        note += "; look alike (left uncertain): " + ", ".join(f"{a} and {b}" for a, b, _ in models.alike)
    if models.hidden:
        note += ("; look like the felt (never counted; a zone unlike the empty table beyond its stacks left "
                 "uncertain): " + ", ".join(f"{v} ({n} of {most} found)" for v, n, most in models.hidden))
    if models.side_alike:
        note += ("; sides alike (stacks topped by these counted only when each chip reads as the top on its"
                 " side): " + ", ".join(f"{a} and {b}" for a, b, _ in models.side_alike))
    figures["on_print"] = {str(v): list(n) for v, n in models.on_print.items()}
    if models.on_print:
        note += (f", chips on the felt's print (left out of the side models where {PRINT_CLEAN} others remain): "
                 + ", ".join(
                     f"{on} of {found} {v}" for v, (on, found) in models.on_print.items()))
    if figures["left_out"]:
        note += ", chips left out of the colour models: " + ", ".join(
            f"{n} of {v}" for v, n in figures["left_out"].items())
    counter = ChipCounter(calib, models)
    figures["out_of_view_px"] = counter.cut
    cut = out_of_picture(calib)
    if cut:
        note += "; " + "; ".join(cut)
    return Calibrated(name, counter, note, figures)


def calibrate_cameras(evalset: EvalSet, calibration: dict[str, CameraPictures] | None = None,
                      made: dict[tuple[Any, ...], Calibrated] | None = None) -> dict[str, Calibrated]:
    """Each camera of *evalset*'s frames calibrated from *calibration* (else the set's own pictures); *made*:
    the calibrations made before (the same layout, camera and pictures give the same counter), taken from
    and added to."""
    pictures = calibration if calibration is not None else evalset.calibration
    made = {} if made is None else made
    out = {}
    for name in sorted({f.camera for f in evalset.frames}):
        if name not in pictures:
            out[name] = Calibrated(name, None, "no calibration pictures for this camera")
            continue
        key = (repr(evalset.layout), name, pictures[name].table, tuple(sorted(pictures[name].chips.items())))
        if key not in made:
            made[key] = calibrate_camera(evalset.layout, name, pictures[name])
        out[name] = made[key]
    return out


def _witnesses(frame: FrameLabel, together: dict[str, list[FrameLabel]],
               calibrated: dict[str, Calibrated]) -> list[Witness]:
    """The other cameras' pictures of *frame*'s moment (its ``scene``), each a second view of its zones."""
    out = []
    for other in together.get(frame.scene, []) if frame.scene is not None else []:
        counter = calibrated[other.camera].counter if other.camera in calibrated else None
        if other.camera != frame.camera and counter is not None:
            witness = counter.witness(read_picture(other.file))
            if witness is not None:
                out.append(witness)
    return out


def evaluate(evalset: EvalSet, calibration: dict[str, CameraPictures] | None = None,
             stable_frames: int = 3, calibrated: dict[str, Calibrated] | None = None) -> dict[str, Any]:
    """Calibrate every camera of the frames (from *calibration*, else the set's own pictures; or take
    them *calibrated*), count every frame; the figures overall, per tag and per camera's calibration."""
    from firmware_host.vision.stability import Stability, ZoneState
    if calibrated is None:
        calibrated = calibrate_cameras(evalset, calibration)
    overall, tags, sequences = Tally(), dict[str, Tally](), dict[tuple[str, str], int]()
    reach = evalset.layout.chip_diameter / 2  # a stack seen this near a labelled one is that one
    previous: np.ndarray | None = None
    stability, sequence, k = Stability(stable_frames), None, 0
    together: dict[str, list[FrameLabel]] = {}  # the frames of each scene (one moment, several cameras)
    for frame in evalset.frames:
        if frame.scene is not None:
            together.setdefault(frame.scene, []).append(frame)
    for frame in evalset.frames:
        tallies = [overall] + [tags.setdefault(t, Tally()) for t in frame.tags]
        cal = calibrated[frame.camera]
        if (frame.camera, frame.sequence) != sequence:
            sequence, stability, previous, k = (frame.camera, frame.sequence), Stability(stable_frames), None, 0
            sequences[sequence] = sequences.get(sequence, 0) + 1
        if cal.counter is None:
            for truth in frame.zones.values():
                for tally in tallies:
                    if truth.covered:
                        tally.covered += 1
                    else:
                        tally.counts["unreadable"] += 1
            continue
        image = read_picture(frame.file)
        result = cal.counter.count(image, previous, witnesses=_witnesses(frame, together, calibrated))
        emitted = {o.zone for o in stability.feed(frame.t if frame.t is not None else 0.1 * k, result)}
        previous, k = image, k + 1
        for name, truth in frame.zones.items():
            zc = result.zones[name]
            stable = stability.state(name) == ZoneState.STABLE
            reported = sum(v * n for v, n in stability.reported(name) or ())
            kinds = [tags.setdefault(f"stacks:{k}", Tally()) for k in sorted(set(truth.kinds))]
            wrong = [] if truth.covered else [stack_wrong(s, truth, reach) for s in zc.stacks]
            for tally in tallies + kinds:
                if truth.covered:
                    tally.covered += 1
                    tally.covered_wrong += zc.status == "ok" and zc.amount != truth.amount
                    tally.covered_occluded += zc.status == "occluded"
                    tally.covered_stable += stable or name in emitted  # an arm over it: never held still
                    continue
                kind = classify(zc.status, zc.amount, truth)
                tally.counts[kind] += 1
                for why in zc.why if kind == "uncertain" else ():
                    tally.why[why] = tally.why.get(why, 0) + 1
                tally.behind_right += zc.behind and zc.amount == truth.amount
                tally.witnessed += zc.witnessed and zc.status == "ok"
                tally.witnessed_right += zc.witnessed and zc.status == "ok" and zc.amount == truth.amount
                tally.stacks += sum(w is not None for w in wrong)
                tally.stacks_wrong += sum(w is True for w in wrong)
                if stable:
                    tally.stable += 1
                    tally.stable_right += reported == truth.amount
    return {"frames": len(evalset.frames), **overall.figures(), "sequences": len(sequences),
            "tags": {t: tally.figures() for t, tally in sorted(tags.items())},
            "calibration": {n: {"ok": c.counter is not None, "note": c.note, **c.figures}
                            for n, c in calibrated.items()}}
