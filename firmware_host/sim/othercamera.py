"""A labelled set as another camera would have taken it
(``python -m firmware_host.sim.othercamera SRC DST [--scale F] [--blur PX] [--noise GREY] [--jpeg Q]``).

Every picture of the set (calibration and frames) resized (the layout's lens and picture size with it),
blurred (a softer lens or focus: Gaussian, sigma in px), given sensor noise (Gaussian, grey levels per
channel) and saved as JPEG at another quality; the labels unchanged. What a set made elsewhere may differ
by, applied to sets whose truth is known (``docs/vision.md``, "Another camera").
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = ["Change", "write_as_other_camera"]

SHIPPED_LAYOUT = Path(__file__).resolve().parents[2] / "hardware" / "camera" / "table8.toml"


@dataclass(frozen=True)
class Change:
    """How the other camera differs: picture *scale*, *blur* and *noise* (px, grey levels), JPEG *quality*."""

    scale: float = 1.0
    blur: float = 0.0
    noise: float = 0.0
    quality: int = 95
    seed: int = 7

    def picture(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """*image* as the other camera takes it (before its JPEG)."""
        if self.scale != 1.0:
            size = (round(image.shape[1] * self.scale), round(image.shape[0] * self.scale))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA if self.scale < 1 else cv2.INTER_CUBIC)
        if self.blur > 0:
            image = cv2.GaussianBlur(image, (0, 0), self.blur)
        if self.noise > 0:
            image = np.clip(image + rng.normal(0.0, self.noise, image.shape), 0, 255).astype(np.uint8)
        return image

    def layout(self, text: str) -> str:
        """A layout TOML's *text* with each camera's lens and picture size scaled."""
        if self.scale == 1.0:
            return text
        text = re.sub(r"(?m)^(focal_px\s*=\s*)([\d.]+)", lambda m: f"{m[1]}{float(m[2]) * self.scale:g}", text)
        return re.sub(r"(?m)^(size_px\s*=\s*)\[\s*(\d+)\s*,\s*(\d+)\s*\]",
                      lambda m: f"{m[1]}[{round(int(m[2]) * self.scale)}, {round(int(m[3]) * self.scale)}]", text)


def write_as_other_camera(src: Path, dst: Path, change: Change) -> int:
    """Write *src*'s labelled set to *dst* as *change* says; returns the pictures written."""
    labels = json.loads((src / "labels.json").read_text())
    layout = src / labels["layout"] if labels.get("layout") else SHIPPED_LAYOUT
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "layout.toml").write_text(change.layout(layout.read_text()))
    labels["layout"] = "layout.toml"
    (dst / "labels.json").write_text(json.dumps(labels, indent=1))
    rng = np.random.default_rng(change.seed)
    pictures = sorted(p for p in src.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    for path in pictures:
        out = dst / path.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        image = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"{path}: not a picture OpenCV can read")
        image = change.picture(image, rng)
        cv2.imwrite(str(out), image, [cv2.IMWRITE_JPEG_QUALITY, change.quality])  # (a PNG stays lossless)
    return len(pictures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="a labelled set (labels.json and its pictures)")
    parser.add_argument("dst", type=Path, help="where the other camera's set is written")
    parser.add_argument("--scale", type=float, default=1.0, help="picture size, share of the set's")
    parser.add_argument("--blur", type=float, default=0.0, help="Gaussian blur, sigma in px")
    parser.add_argument("--noise", type=float, default=0.0, help="sensor noise, grey levels per channel")
    parser.add_argument("--jpeg", type=int, default=95, help="JPEG quality")
    args = parser.parse_args(argv)
    n = write_as_other_camera(args.src, args.dst, Change(args.scale, args.blur, args.noise, args.jpeg))
    print(f"{n} pictures written to {args.dst}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
