"""The TD's dashboard: every table live in a browser, irregularities answered from it (docs/dashboard.md).

Served by ``tablectl hall run`` when the hall's config has a ``[dashboard]`` section. The pure parts:
:mod:`room` (tiles, queue, table pages), :mod:`h4h` (hand-for-hand), :mod:`accounts` (roles, sessions);
the shell: :mod:`link` (the broker, signed commands), :mod:`server` (aiohttp), ``static/`` (the page).
"""
