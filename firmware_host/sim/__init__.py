"""Simulated tables: scripts to recordings, the bets' video and its renderer, the demo session, a local Mosquitto."""
