"""Entry script of the windowed launcher (``microagg-desktop``) in the PyInstaller bundle."""

import sys

from microagg_desktop.app import main

if __name__ == "__main__":
    sys.exit(main())
