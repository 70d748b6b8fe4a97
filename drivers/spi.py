"""SPI transports: the one thing the MFRC522 driver needs from the bus.

A transport does full-duplex transfers: ``transfer(data) -> bytes`` sends
*data* with chip-select held for the whole transfer and returns the bytes
clocked in at the same time (same length). :class:`SpidevTransport` is the
real one (``/dev/spidevB.D``, Pi 4 and Pi 5); the MFRC522 emulator provides
another (:class:`drivers.emulated.mfrc522.EmulatedTransport`).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Transport", "SpidevTransport"]


@runtime_checkable
class Transport(Protocol):
    """A full-duplex SPI link to one chip (one chip-select)."""

    speed_hz: int

    def transfer(self, data: bytes) -> bytes:
        """Send *data*, return the bytes read meanwhile (same length)."""

    def close(self) -> None:
        """Release the bus device."""


class SpidevTransport:
    """SPI through the kernel's spidev (``/dev/spidev{bus}.{device}``), mode 0.

    ``spidev`` is imported here, when the first real transport is opened, so
    the rest of the package imports and tests on any machine.
    """

    def __init__(self, bus: int, device: int, speed_hz: int = 4_000_000) -> None:
        import spidev  # hardware-only: the [pi] extra

        self.bus, self.device, self.speed_hz = bus, device, speed_hz
        self._spi = spidev.SpiDev()
        self._spi.open(bus, device)
        self._spi.max_speed_hz = speed_hz
        self._spi.mode = 0

    def transfer(self, data: bytes) -> bytes:
        if self._spi is None:
            raise ValueError(f"spidev{self.bus}.{self.device} is closed")
        return bytes(self._spi.xfer2(list(data)))

    def close(self) -> None:
        """Close this bus device only (idempotent)."""
        if self._spi is not None:
            self._spi.close()
            self._spi = None

    def __repr__(self) -> str:
        return f"SpidevTransport(bus={self.bus}, device={self.device}, speed_hz={self.speed_hz})"
