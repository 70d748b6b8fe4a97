"""The hall server: every table's events archived (``hall.archive``), kept in a store (``hall.store``),
told back as hand histories (``hall.histories``); its commands are ``tablectl hall ...``.

A second program on another machine: it shares the contract (:mod:`firmware_host.mqtt.contract`) with
the tables and nothing else. SQLite needs nothing beyond Python; PostgreSQL needs the ``[hall]`` extra.
"""
