"""``python -m core.cli``."""

import sys

from core.cli.main import main

sys.exit(main())
