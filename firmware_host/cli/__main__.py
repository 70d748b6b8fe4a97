"""``python -m firmware_host.cli``: the same as ``tablectl``."""
import sys

from firmware_host.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
