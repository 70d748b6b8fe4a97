"""The table controller process: hand engine, detectors, event contract, publisher, CLI."""
