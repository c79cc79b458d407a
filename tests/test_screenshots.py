"""The screenshot script drives the real window through the whole workflow."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage

from microagg_desktop.screenshots import SCREENS, take_screenshots

pytestmark = pytest.mark.gui


def test_every_screen_is_written_at_the_window_size(qapp, tmp_path):
    written = take_screenshots(tmp_path, (1024, 640))
    assert [p.stem for p in written] == list(SCREENS)
    for path in written:
        image = QImage(str(path))
        assert not image.isNull(), path
        if path.stem not in ("import", "report"):  # a dialog and a page, not the window
            assert (image.width(), image.height()) == (1024, 640), path
        # Not a blank picture: a screen shows text, tables or plots in many colours.
        colours = {image.pixel(x, y) for x in range(0, image.width(), 7)
                   for y in range(0, image.height(), 7)}
        assert len(colours) > 20, path
