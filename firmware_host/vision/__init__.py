"""The chip cameras, pure but for the frames: counting per zone, stability, face-up cards, camera health, the feed."""
