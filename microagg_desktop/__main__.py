"""``python -m microagg_desktop [FILE]``."""

import sys

from microagg_desktop.app import main

sys.exit(main())
