"""Calibration of the table: deck registration, camera zones and chip colours, reader mapping."""
