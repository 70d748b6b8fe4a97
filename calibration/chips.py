"""Chip colours: one colour model per denomination, learnt under the table's own light.

Colours live in a normalised space: each pixel is first divided by the white
reference patch measured in the same frame (so the light's colour and level
cancel out), then described by its chroma ``(b, g) / (b + g + r)`` and its
value (brightness relative to the patch). A model is the mean and spread of
the top faces of the chips shown. Two denominations whose colours overlap under
this light are kept *alike*: a stack read as either is left uncertain (the dealer
is asked), the others are counted; a denomination like the felt is refused. A
chip whose colour stands far from the others of its denomination (a chip of
another colour in the picture, one read through a shadow or a reflection) is
left out and named, instead of widening the model until two denominations overlap.
Each denomination's side (a chip's edge) has a model too: a mixed stack's chips
are read on its side, one by one. A side's level is its logarithm (:func:`side_features`):
the edge's shading changes a side's level by a share of it, a dark chip's as a light one's.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from firmware_host.vision.colour import CardReference

__all__ = ["ChipModels", "ColourModel", "edge_direction", "features", "inliers", "learn", "load_models",
           "robust_spread", "side_features"]

MIN_SPREAD = np.array([0.008, 0.008, 0.03])  # floor of a model's spread: noise of one picture is not the world
SIDE_SPREAD = np.array([0.015, 0.015, 0.15])  # a side's (the level's, its logarithm's): a chip's edge is a few
# rows, blurred into its neighbours'
LINEAR_SIDE_SPREAD = np.array([0.015, 0.015, 0.05])  # a side's spread floor with a linear level (the look-alikes')
SIDE_FLOOR = 0.004  # the darkest side level kept before its logarithm (one grey level of 255)
DARK_CHROMA = 0.004  # chroma a side's reading may stray per unit of 1 / its level (share of the white patch):
# a black chip's side (level 0.08-0.13) on a stack reads 7-9 spreads from its single chips' in chroma
MIN_SEPARATION = 4.0  # model means must be this many (combined) spreads apart
OUTLIER_SPREADS = 5.0  # a sample this many robust spreads from its denomination's median is left out
SPREAD_CHIPS = 3  # the fewest single chips of a denomination its edge spread is measured from
EDGE_NOISE = 5e-4  # variance (light-normalised units) a pixel's colour has from noise alone


def features(bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Pixels (... x 3 BGR) to (chroma b, chroma g, value), normalised by the patch colour *white*."""
    p = bgr.astype(np.float32) / np.maximum(np.asarray(white, np.float32), 1.0)
    s = p.sum(axis=-1, keepdims=True) + 1e-3
    return np.concatenate([p[..., :2] / s, s / 3], axis=-1)


def side_features(bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Side pixels (... x 3 BGR) to (chroma b, chroma g, natural logarithm of the value), as :func:`features`.

    >>> [round(float(x), 2) for x in side_features(np.array([[60.0, 60.0, 60.0]]), np.array([240.0, 240.0, 240.0]))[0]]
    [0.33, 0.33, -1.38]
    """
    f = features(bgr, white)
    f[..., 2] = np.log(np.maximum(f[..., 2], SIDE_FLOOR))
    return f


@dataclass(frozen=True)
class ColourModel:
    """Mean and spread of a colour in the normalised space."""

    mean: tuple[float, float, float]
    spread: tuple[float, float, float]

    def distance(self, f: np.ndarray) -> np.ndarray:
        """Distance of features *f* (... x 3) in units of spread."""
        return np.sqrt((((f - np.array(self.mean, np.float32)) / np.array(self.spread, np.float32)) ** 2).sum(-1))

    def chroma_distance(self, f: np.ndarray) -> np.ndarray:
        """Distance of features *f* (... x 3) in units of spread, in chroma alone (the level left out)."""
        return np.sqrt((((f[..., :2] - np.array(self.mean[:2], np.float32))
                         / np.array(self.spread[:2], np.float32)) ** 2).sum(-1))

    @classmethod
    def fit(cls, samples: np.ndarray) -> ColourModel:
        samples = np.asarray(samples, np.float64).reshape(-1, 3)
        return cls(tuple(np.median(samples, 0).tolist()), tuple(np.maximum(samples.std(0), MIN_SPREAD).tolist()))


def robust_spread(samples: np.ndarray, median: np.ndarray | None = None) -> np.ndarray:
    """Per column of *samples*, 1.4826 median absolute deviations about *median* (theirs if None): a standard
    deviation that a few samples far off do not move."""
    if median is None:
        median = np.median(samples, 0)
    spread: np.ndarray = 1.4826 * np.median(np.abs(samples - median), 0)
    return spread


def inliers(samples: np.ndarray) -> np.ndarray:
    """Which samples (N x 3 features) agree with the others: within ``OUTLIER_SPREADS`` robust spreads
    (1.4826 MAD per feature, floored at ``MIN_SPREAD``) of their median. With fewer than 3 samples
    there is no majority to tell an outlier by: all are kept."""
    samples = np.asarray(samples, np.float64).reshape(-1, 3)
    if len(samples) < 3:
        return np.ones(len(samples), bool)
    med = np.median(samples, 0)
    spread = np.maximum(robust_spread(samples, med), MIN_SPREAD)
    keep: np.ndarray = np.sqrt((((samples - med) / spread) ** 2).sum(1)) <= OUTLIER_SPREADS
    return keep


@dataclass(frozen=True)
class ChipModels:
    """The chip set's colour models (value -> model) and the felt's."""

    chips: dict[int, ColourModel]
    felt: ColourModel
    edge_bias: dict[int, float] = field(default_factory=dict)  # px a silhouette measures beyond its geometry
    edge_spread: dict[int, float] = field(default_factory=dict)  # px: how far single chips' silhouettes stray from
    # it (robust standard deviation; see :meth:`spread`)
    edge_dir: dict[int, tuple[float, float, float]] = field(default_factory=dict)  # see edge_direction
    inlay: dict[int, float] = field(default_factory=dict)  # how much brighter a chip's centre than its face
    left_out: dict[int, int] = field(default_factory=dict)  # chips shown but left out of each model (outliers)
    card: CardReference | None = None  # the colour card under this light (None: the white patch only)
    card_note: str = field(default="", compare=False)  # why there is no card (calibration's message; not saved)
    on_print: dict[int, tuple[int, int]] = field(default_factory=dict, compare=False)  # chips found on the felt's
    # print and all chips found, per denomination (calibration's message; not saved)
    alike: tuple[tuple[int, int, float], ...] = ()  # pairs the camera cannot tell apart, with their separation
    side: dict[int, ColourModel] = field(default_factory=dict)  # each denomination's side (a chip's edge)
    linear_alike: tuple[tuple[int, int, float], ...] = ()  # side look-alikes measured with a linear level
    felt_light: dict[str, float] = field(default_factory=dict)  # each chip zone's felt level in the calibration
    # pictures (share of the felt model's, under the white patch's light): where the light fell on the table
    hidden: tuple[tuple[int, int, int], ...] = ()  # denominations that look like the felt: (value, chips found,
    # chips found of the best-found denomination) in the calibration pictures

    @cached_property
    def unsure(self) -> frozenset[int]:
        """The denominations of the look-alike pairs, those that look like the felt (``hidden``) and those
        under twice ``MIN_SEPARATION`` from a hidden one's model (learnt from fewer chips, in a light that
        hides them: a grey 50 hidden in a dark gap between spots read a stack of seven as four black 1000s
        at 0.97, 6.1 apart): never counted with confidence."""
        hidden = {v for v, _, _ in self.hidden}
        near = {u for v in hidden if v in self.chips for u, m in self.chips.items()
                if u != v and separation(m, self.chips[v]) < 2 * MIN_SEPARATION}
        return frozenset(v for a, b, _ in self.alike for v in (a, b)) | hidden | near

    @property
    def side_alike(self) -> tuple[tuple[int, int, float], ...]:
        """Pairs of denominations whose chips' sides are under ``MIN_SEPARATION`` apart, with their
        separation: a chip read on a stack's side as either is not read (a mixed stack holding one is left
        uncertain), and a stack topped by either is counted only when each of its chips vouches for it
        (read as its top's with confidence, more of it if ``level_alike`` too). Apart in logarithm of the level
        (:func:`side_features`) and with a linear level (``linear_alike``): a black side's level is
        tighter in logarithm, but a grey chip in a green stack on green felt, or under a light the
        calibration did not see, is read as the black or the green with confidence (docs/vision.md)."""
        return _pairs(self.side, dict(((a, b), sep) for a, b, sep in self.linear_alike))

    @property
    def level_alike(self) -> tuple[tuple[int, int, float], ...]:
        """The side look-alike pairs in logarithm of the level alone: a stack topped by either is vouched
        for only by chips read with more confidence than ``side_alike``'s others (the counter's)."""
        return _pairs(self.side)

    def hidden_text(self) -> list[str]:
        """One line per denomination that looks like the felt, for the installer."""
        return [f"chips {v} ({n} found) found less often than the others ({most}): they look like the felt under "
                "this light; a stack of them is never counted, and a zone where the table differs from its empty "
                "picture beyond the stacks read is left uncertain for the dealer" for v, n, most in self.hidden]

    def alike_text(self) -> list[str]:
        """One line per look-alike pair, for the installer."""
        return [f"chips {a} and {b} look alike under this light (separation {sep:.1f} < {MIN_SEPARATION}): "
                "a stack read as either is left uncertain for the dealer" for a, b, sep in self.alike]

    @property
    def edge_bias_px(self) -> float:
        """The median edge bias over the chip set."""
        return float(np.median(list(self.edge_bias.values()))) if self.edge_bias else 0.0

    def bias(self, value: int | None) -> float:
        """The edge bias (px) of a denomination's chips (their contrast with the felt sets it)."""
        return self.edge_bias[value] if value in self.edge_bias else self.edge_bias_px

    def spread(self, value: int | None) -> float:
        """How far (px, robust standard deviation) a denomination's single chips' silhouettes strayed from its
        edge bias in the calibration pictures: what the bias leaves uncertain in one stack's height (a chip of the
        felt's colour, a green 200 on green felt: 0.4-1.6 px on the physically based sessions; the others mostly
        0.1-0.5). The largest of the chip set's for a denomination without one (none: a file saved before)."""
        if value in self.edge_spread:
            return self.edge_spread[value]
        return max(self.edge_spread.values(), default=0.0)

    def classify(self, f: np.ndarray) -> tuple[int, float]:
        """The denomination nearest to the features *f* (3,) and a confidence in 0..1.

        The confidence falls when the colour is far from every model or nearly
        as close to the second model as to the first; it is 0 for a look-alike denomination.
        """
        return self._nearest(self.chips, np.asarray(f).reshape(1, 3))[0]

    def classify_side(self, f: np.ndarray, dark: bool = False) -> Sequence[tuple[int | None, float]]:
        """Per row of side features *f* (N x 3), the denomination whose chips' side is nearest and a
        confidence (as :meth:`classify`); None without side models. *dark*: the chroma's spreads widened
        by ``DARK_CHROMA`` over the side's level, as a dark side's chroma is noise and gloss more than
        colour (its level tells it)."""
        f = np.asarray(f).reshape(-1, 3)
        if len(self.side) < 2:
            return [(None, 0.0)] * len(f)
        if not dark:
            return self._nearest(self.side, f)
        extra = DARK_CHROMA / np.maximum(np.exp(f[:, 2]).astype(np.float64), SIDE_FLOOR)  # per row
        spread = np.array([m.spread for m in self.side.values()])  # models x 3
        widened = np.empty((len(f), len(spread), 3), np.float32)
        widened[:, :, :2] = np.hypot(spread[None, :, :2], extra[:, None, None])
        widened[:, :, 2] = spread[None, :, 2]
        return self._nearest(self.side, f, widened)

    def side_nearer(self, f: np.ndarray, value: int) -> np.ndarray:
        """How much nearer side features *f* (N x 3) are to another denomination's side than to
        *value*'s, each: the nearest other's distance over *value*'s (under 1: another is nearer);
        inf without side models for *value* and another."""
        f = np.asarray(f, np.float32).reshape(-1, 3)
        if value not in self.side or len(self.side) < 2:
            return np.full(len(f), np.inf)
        values, mean, spread, _ = self._table(self.side)
        d = np.sqrt((((f[:, None, :] - mean[None]) / spread) ** 2).sum(-1))  # N x models
        own = values.index(value)
        other = np.delete(d, own, axis=1).min(1)
        ratio: np.ndarray = other / np.maximum(d[:, own], 1e-6)
        return ratio

    @cached_property
    def _tables(self) -> dict[int, tuple[list[int], np.ndarray, np.ndarray, list[int]]]:
        """Per models' dict (``chips``, ``side``; by identity): its values sorted, their means and spreads
        (1 x models x 3) in that order, and where each sits in the dict's own order: made once."""
        tables = {}
        for models in (self.chips, self.side):
            values = sorted(models)
            tables[id(models)] = (values, np.array([models[v].mean for v in values], np.float32),
                                  np.array([models[v].spread for v in values], np.float32)[None],
                                  [list(models).index(v) for v in values])
        return tables

    def _table(self, models: dict[int, ColourModel]) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
        """:attr:`_tables`' entry of *models* (``chips`` or ``side``)."""
        return self._tables[id(models)]

    def _nearest(self, models: dict[int, ColourModel], f: np.ndarray,
                 spread: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Per row of features *f* (N x 3): the nearest model's value (ties to the lower) and the
        confidence; *spread*, the models' spreads per row (N x models x 3) instead of their own."""
        values, mean, own, place = self._table(models)
        spread = own if spread is None else spread[:, place]  # (given in the models' own order)
        d = np.sqrt((((f[:, None, :] - mean[None]) / spread) ** 2).sum(-1)).astype(np.float64)  # rows x models
        order = np.argsort(d, axis=1, kind="stable")[:, :2]
        d1, d2 = d[np.arange(len(d))[:, None], order].T
        margin = (d2 - d1) / np.maximum(d2, 1e-6)
        nearness = np.where(d1 < 4, 1.0, np.maximum(0.0, 1 - (d1 - 4) / 4))
        confidence = np.minimum(1.0, 2 * margin) * nearness
        unsure = self.unsure
        return [(values[i], 0.0 if values[i] in unsure else float(c)) for i, c in zip(order[:, 0], confidence)]

    def to_dict(self) -> dict:
        return {"kind": "chip-colours",
                "chips": {str(v): {"mean": m.mean, "spread": m.spread} for v, m in self.chips.items()},
                "felt": {"mean": self.felt.mean, "spread": self.felt.spread},
                "edge_bias_px": {str(v): b for v, b in self.edge_bias.items()},
                "edge_spread_px": {str(v): b for v, b in self.edge_spread.items()},
                "edge_dir": {str(v): list(d) for v, d in self.edge_dir.items()},
                "inlay": {str(v): c for v, c in self.inlay.items()},
                "card": self.card.to_dict() if self.card else None,
                "alike": [[a, b, sep] for a, b, sep in self.alike],
                "side": {str(v): {"mean": m.mean, "spread": m.spread} for v, m in self.side.items()},
                "side_level": "log", "linear_alike": [[a, b, sep] for a, b, sep in self.linear_alike],
                "felt_light": dict(self.felt_light), "hidden": [list(h) for h in self.hidden]}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1), encoding="utf-8")


def separation(a: ColourModel, b: ColourModel) -> float:
    """How many combined spreads apart two colour models are."""
    sa, sb = np.array(a.spread), np.array(b.spread)
    return float(np.sqrt((((np.array(a.mean) - np.array(b.mean)) ** 2) / (sa ** 2 + sb ** 2)).sum()))


def felt_bgr(felt: ColourModel) -> np.ndarray:
    """The felt's light-normalised BGR (each channel over the reference patch's)."""
    cb, cg, v = felt.mean
    return np.array([cb * 3 * v, cg * 3 * v, (1 - cb - cg) * 3 * v])


def edge_direction(pixels: np.ndarray, felt: ColourModel) -> tuple[float, float, float]:
    """The colour direction (light-normalised BGR, scaled: chip 1, felt 0) in which a denomination's pixels
    (N x 3, light-normalised BGR: face, side, shading, white spots and inlay) all lie about
    as far from the felt, and the felt far from them: Fisher's discriminant between the
    chip and the felt. Along it a chip's silhouette is a plain step from the felt, so its
    edge is at the step's half level whatever part of the chip touches the felt and however
    blurred the picture is.
    """
    pixels = np.asarray(pixels, np.float64).reshape(-1, 3)
    mean = pixels.mean(0)
    spread = np.cov(pixels.T) if len(pixels) > 3 else np.zeros((3, 3))
    contrast = mean - felt_bgr(felt)
    w = np.linalg.solve(spread + EDGE_NOISE * np.eye(3), contrast)
    w /= max(float(w @ contrast), 1e-9)  # scaled so that the chip is 1 and the felt 0
    return float(w[0]), float(w[1]), float(w[2])


def learn(samples: dict[int, np.ndarray], felt: ColourModel, excess: Mapping[int, Sequence[float]] | None = None,
          edge_dir: dict[int, tuple[float, float, float]] | None = None,
          inlay: dict[int, float] | None = None, side: dict[int, np.ndarray] | None = None,
          seen: Iterable[int] = ()) -> ChipModels:
    """Models from feature samples of each denomination's top faces (outliers left out: :func:`inliers`);
    pairs closer than ``MIN_SEPARATION`` are kept as look-alikes (``ChipModels.alike``); a denomination
    like the felt is refused (ValueError).

    *excess* is each denomination's single chips' silhouette excess in pixels (their median is its edge bias,
    their spread what that leaves uncertain: :func:`edge_spread`), *inlay* how much brighter
    its chips' centre (the inlay) is than the face around it, *side* feature samples of its
    chips' side (see ``vision.learn_chips``). A denomination in *seen* had its chips found in its
    picture as often as the others': it stands out of the felt whatever its colour model's distance
    to the felt's (a grey chip on a beige felt), so it is not refused for it.
    """
    if len(samples) < 2:
        raise ValueError("show at least two denominations")
    shown = {int(v): len(np.asarray(s).reshape(-1, 3)) for v, s in samples.items()}
    sides = {int(v): np.asarray(f, np.float64).reshape(-1, 3) for v, f in (side or {}).items()
             if len(np.asarray(f).reshape(-1, 3))}
    kept = {int(v): np.asarray(s).reshape(-1, 3)[inliers(s)] for v, s in samples.items()}
    chips = {v: ColourModel.fit(s) for v, s in kept.items() if len(s)}
    missing = sorted(set(shown) - set(chips))
    if missing:
        raise ValueError(f"no chip seen for denomination(s) {missing}")
    felt_model = felt
    values = sorted(chips)
    alike = []
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            sep = separation(chips[a], chips[b])
            if sep < MIN_SEPARATION:
                alike.append((a, b, round(sep, 2)))
        sep = separation(chips[a], felt_model)
        if sep < MIN_SEPARATION and a not in set(seen):
            raise ValueError(f"chips {a} look like the felt under this light (separation {sep:.1f})")
    measured = {int(v): np.asarray(e, np.float64) for v, e in (excess or {}).items() if len(e)}
    spreads = {v: edge_spread(e) for v, e in measured.items()}
    return ChipModels(chips, felt_model, {v: float(np.median(e)) for v, e in measured.items()},
                      {v: e for v, e in spreads.items() if e is not None},
                      {int(v): _triple(d) for v, d in (edge_dir or {}).items()},
                      {int(v): float(c) for v, c in (inlay or {}).items()},
                      {v: shown[v] - len(kept[v]) for v in sorted(kept)}, alike=tuple(alike),
                      side={int(v): _side_model(f) for v, f in sides.items()},
                      linear_alike=_pairs({v: _side_model(_linear(f), LINEAR_SIDE_SPREAD) for v, f in sides.items()}))


def edge_spread(excess: np.ndarray) -> float | None:
    """The robust standard deviation (px: :func:`robust_spread`) of single chips' silhouette excess, or None
    from fewer than ``SPREAD_CHIPS`` chips."""
    if len(excess) < SPREAD_CHIPS:
        return None
    return round(float(robust_spread(excess)), 3)


def _side_model(samples: np.ndarray, floor: np.ndarray = SIDE_SPREAD) -> ColourModel:
    """A side's model: its inliers' median, the spread floored at *floor*."""
    fit = ColourModel.fit(samples[inliers(samples)])
    return ColourModel(fit.mean, tuple(np.maximum(fit.spread, floor).tolist()))


def _linear(samples: np.ndarray) -> np.ndarray:
    """Side features (:func:`side_features`) with the level back from its logarithm."""
    out = np.array(samples, np.float64)
    out[:, 2] = np.exp(out[:, 2])
    return out


def _pairs(models: dict[int, ColourModel], more: dict[tuple[int, int], float] | None = None,
           ) -> tuple[tuple[int, int, float], ...]:
    """The pairs of *models* under ``MIN_SEPARATION`` apart, with their separation (the lesser of theirs and
    *more*'s, pairs measured otherwise)."""
    values = sorted(models)
    found = {(a, b): separation(models[a], models[b]) for i, a in enumerate(values) for b in values[i + 1:]}
    for pair, sep in (more or {}).items():
        found[pair] = min(sep, found.get(pair, sep))
    return tuple((a, b, round(sep, 2)) for (a, b), sep in sorted(found.items()) if sep < MIN_SEPARATION)


def load_models(path: str | Path) -> ChipModels:
    """Load the file written by :meth:`ChipModels.save`."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("kind") != "chip-colours":
        raise ValueError(f"{path}: not a chip colour file")
    chips = {int(v): ColourModel(tuple(m["mean"]), tuple(m["spread"])) for v, m in data["chips"].items()}
    saved = {int(v): ColourModel(tuple(m["mean"]), tuple(m["spread"])) for v, m in data.get("side", {}).items()}
    linear = data.get("side_level") != "log"  # a file written before the level was a logarithm
    return ChipModels(chips, ColourModel(tuple(data["felt"]["mean"]), tuple(data["felt"]["spread"])),
                      {int(v): float(b) for v, b in data.get("edge_bias_px", {}).items()},
                      {int(v): float(b) for v, b in data.get("edge_spread_px", {}).items()},
                      {int(v): _triple(d) for v, d in data.get("edge_dir", {}).items()},
                      {int(v): float(c) for v, c in data.get("inlay", {}).items()},
                      card=CardReference.from_dict(data["card"]) if data.get("card") else None,
                      alike=tuple((int(a), int(b), float(sep)) for a, b, sep in data.get("alike", [])),
                      side={int(v): _side_level(m, data.get("side_level")) for v, m in saved.items()},
                      linear_alike=tuple((int(a), int(b), float(sep)) for a, b, sep in data["linear_alike"])
                      if "linear_alike" in data else (_pairs(saved) if linear else ()),
                      felt_light={str(z): float(v) for z, v in data.get("felt_light", {}).items()},
                      hidden=tuple((int(v), int(n), int(most)) for v, n, most in data.get("hidden", [])))


def _side_level(model: ColourModel, level: str | None) -> ColourModel:
    """A saved side model in :func:`side_features`' space: a file written before the side's level was a
    logarithm (no ``side_level``) has it linear; its mean and spread are carried over (the spread as a
    share of the level, floored at ``SIDE_SPREAD``)."""
    if level == "log":
        return model
    (cb, cg, v), (sb, sg, sv) = model.mean, model.spread
    v = max(v, SIDE_FLOOR)
    return ColourModel((cb, cg, float(np.log(v))), (sb, sg, max(sv / v, float(SIDE_SPREAD[2]))))


def _triple(values: Iterable[float]) -> tuple[float, float, float]:
    a, b, c = (float(v) for v in values)
    return a, b, c
