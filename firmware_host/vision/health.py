"""Camera faults from the frames it gives (or does not)."""
from __future__ import annotations

import cv2
import numpy as np

from calibration.geometry import detect_markers, pose_error
from calibration.sharpness import marker_blur
from firmware_host.observations import DeviceFault, DeviceRecovered, Observation
from firmware_host.vision.counter import ChipCounter
from firmware_host.vision.light import SATURATED

SOFT = 1.3  # the markers' blur this many times the calibration's, in two checks in a row: ``soft``


class CameraHealth:
    """Camera faults from the frames: ``no-frames``, ``frozen-frames``, ``lost-light``, ``lost-focus``,
    ``overexposed``, ``relit``, ``moved``, ``soft``.

    ``relit``: the light has left what the chip calibration covers (``vision.colour``: the colour
    card's fit, the light's level or colour); while it lasts the chip zones are uncertain.

    ``moved``: every *pose_every* seconds the ArUco markers are found again and compared with
    the calibration (``geometry.pose_error``); two checks in a row that find them over
    *moved_px* away (the camera knocked, its post turned) raise it, one check that finds them
    in place clears it. Counts from a moved camera cannot be trusted: see :class:`CameraFeed`.

    ``soft``: at the same checks the markers' blur (``calibration.sharpness``) is measured again
    (:attr:`blur_px`); over ``SOFT`` times the calibration's in two checks in a row raises it (the
    focus has drifted: refocus, then calibrate the table again). The counter reads stacks' sides with
    the larger of the two blurs (:class:`CameraFeed`), so a softer picture leaves them uncertain.
    """

    def __init__(self, counter: ChipCounter, timeout: float = 1.0, frozen: int = 5, focus: float | None = None,
                 min_light: float = 40.0, persist: int = 5, pose_every: float = 5.0, moved_px: float = 3.0) -> None:
        self.counter, self.timeout, self.frozen, self.min_light = counter, timeout, frozen, min_light
        self.focus, self.persist = focus, persist  # light and focus faults: over *persist* frames in a row
        self.pose_every, self.moved_px = pose_every, max(moved_px, 2.5 * counter.calib.rms_px)
        self._pose_t: float | None = None
        self._pose: tuple[int, str] = (0, "")  # checks in a row that found the markers moved, the last detail
        self._soft: tuple[int, str] = (0, "")  # checks in a row that found the markers blurred, the last detail
        self.blur_px: float | None = None  # the markers' blur at the last check that measured it
        self._streak: dict[str, int] = {}
        self._last_t: float | None = None
        self._last_frame: np.ndarray | None = None  # a sparse sample of the last frame
        self._same = 0
        self.faults: set[str] = set()

    def sharpness(self, frame: np.ndarray) -> float:
        """Laplacian variance around the reference patch (its edges are always in view)."""
        y0, y1, x0, x1 = self.counter.light.ref_box
        pad = max(8, (x1 - x0))
        crop = cv2.cvtColor(frame[max(y0 - pad, 0):y1 + pad, max(x0 - pad, 0):x1 + pad], cv2.COLOR_BGR2GRAY)
        return float(cv2.Laplacian(crop, cv2.CV_32F).var())

    def _check_pose(self, t: float, frame: np.ndarray) -> None:
        """The markers against the calibration, every *pose_every* seconds (inconclusive when fewer
        than 2 of them are seen: the last finding stands)."""
        if self._pose_t is not None and t - self._pose_t < self.pose_every:
            return
        self._pose_t = t
        calib = self.counter.calib
        markers = detect_markers(frame, calib.layout, calib.markers_seen)
        error, found = pose_error(frame, calib, markers)
        if error is None:
            return
        blur = marker_blur([(frame, markers.values())])
        if blur is not None:
            self.blur_px = blur
            soft = calib.blur_px is not None and blur > SOFT * calib.blur_px
            self._soft = ((self._soft[0] + 1, f"markers' blur {blur:.2f} px, calibrated {calib.blur_px:.2f} px: "
                           "refocus the camera, then calibrate the table again") if soft else (0, ""))
        if error > self.moved_px:
            self._pose = (self._pose[0] + 1, f"markers {error:.1f} px from the calibration ({found} seen): "
                                             "calibrate the table again")
        else:
            self._pose = (0, "")

    def feed(self, t: float, frame: np.ndarray | None) -> list[Observation]:
        """Observations for one tick: *frame* is None when the driver got nothing."""
        now: dict[str, str] = {}
        if frame is None:
            if self._last_t is not None and t - self._last_t > self.timeout:
                now["no-frames"] = f"no frame for {t - self._last_t:.1f} s"
            elif self._last_t is None:
                now["no-frames"] = "no frame yet"
        else:
            self._last_t = t
            sample = frame[::16, ::16]
            same = self._last_frame is not None and np.array_equal(sample, self._last_frame)
            self._same = self._same + 1 if same else 0
            self._last_frame = sample.copy()
            if self._same >= self.frozen:
                now["frozen-frames"] = f"{self._same + 1} identical frames"
            level = float(np.mean(self.counter.light.white(frame)))
            seen: dict[str, str] = {}  # an arm passing over the patch is not a fault: only what lasts is
            if level < self.min_light:
                seen["lost-light"] = f"reference patch at {level:.0f}/255"
            y0, y1, x0, x1 = self.counter.light.ref_box
            patch = frame[y0:y1, x0:x1][self.counter.light.ref_mask].mean(0)
            if (patch >= SATURATED).any():
                seen["overexposed"] = (f"reference patch saturated ({', '.join(f'{c:.0f}' for c in patch)}): "
                                       "exposure too long (auto exposure off?); bright chips lose their colour")
            sharp = self.sharpness(frame)
            if self.focus is None:
                self.focus = sharp
            elif sharp < 0.3 * self.focus and "lost-light" not in seen:
                seen["lost-focus"] = f"sharpness {sharp:.0f}, calibrated {self.focus:.0f}"
            relit = self.counter.light.relit(frame)
            if relit is not None and "lost-light" not in seen:
                seen["relit"] = f"{relit}: chips are not counted; calibrate chips in this light or restore it"
            for fault in ("lost-light", "lost-focus", "overexposed", "relit"):
                self._streak[fault] = self._streak.get(fault, 0) + 1 if fault in seen else 0
                if fault in seen and (self._streak[fault] >= self.persist or fault in self.faults):
                    now[fault] = seen[fault]
            self._check_pose(t, frame)
            if self._pose[0] >= 2 or (self._pose[0] and "moved" in self.faults):
                now["moved"] = self._pose[1]
            if self._soft[0] >= 2 or (self._soft[0] and "soft" in self.faults):
                now["soft"] = self._soft[1]
        out: list[Observation] = []
        for fault, detail in now.items():
            if fault not in self.faults:
                out.append(DeviceFault(t, "camera", fault, detail))
        cleared = {f for f in self.faults if f not in now and not (frame is None and f != "no-frames")}
        for fault in sorted(cleared):
            out.append(DeviceRecovered(t, "camera", f"{fault} cleared"))
        self.faults = (self.faults - cleared) | set(now)
        return out
