"""Entry script of the console launcher (``microagg``) in the PyInstaller bundle.

``microagg --self-test`` runs the offline self-test (:mod:`microagg_desktop.selftest`)
without the GUI; anything else goes to the command line, :func:`core.cli.main`. The
flag is handled here and not in ``core.cli`` because the engine never imports the
application package (the import-linter contract in ``pyproject.toml``).
"""

import sys

if __name__ == "__main__":
    if "--self-test" in sys.argv[1:]:
        from microagg_desktop.selftest import run_self_test

        sys.exit(run_self_test(gui=False))
    from core.cli.main import main

    sys.exit(main())
