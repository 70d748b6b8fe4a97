"""Hardware in the loop: recordings, their replay through the drivers, real hands (PHH) through the engine."""
