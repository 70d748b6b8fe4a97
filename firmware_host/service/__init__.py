"""The shell on the Pi: the service (source, journal, engine, outbox, publisher, commands), its config and devices."""
