"""``tablectl``: one module per command group, the parser in :mod:`firmware_host.cli.main`."""
