"""``--self-test``: check that this copy of the application works, offline and headless.

Both launchers of the packaged application accept ``--self-test`` (``microagg-desktop
--self-test`` and ``microagg --self-test``); in a source checkout run
``python -m microagg_desktop.selftest [--gui]``. The test needs no display (Qt's
``offscreen`` platform is used unless ``QT_QPA_PLATFORM`` is set) and no network: any
attempt to open an internet socket from Python raises and fails the test.

Steps, one line each (``ok: ...``, ``FAILED: ...`` or ``skipped: ...``):

1. load the bundled sample survey;
2. run MDAV (k = 5), and MDAV with a nominal quasi-identifier;
3. run one t-closeness method (the first registered ``tc-*`` method), if any is
   registered; otherwise say so and go on;
4. verify k-anonymity (and t-closeness) independently of the methods;
5. export the MDAV result to XLSX with :func:`core.report.documents.export_result` in a
   temporary folder and read it back;
6. write the HTML report with its figures there and read it back;
7. write the sample as an SPSS ``.sav`` file with pyreadstat (``region`` as labelled
   codes) and read it back: the value labels become the categories;
8. save a project on that file with an MDAV run (:mod:`core.project`), open it again
   and re-run the run: the same release;
9. console launcher: run ``microagg anonymize`` and ``microagg rerun`` on the project
   in-process, and read the bill of materials (the bundle's ``BILL_OF_MATERIALS.csv``
   when frozen). Windowed launcher: write the PDF report (Qt's ``QPdfWriter``; it must
   start with ``%PDF`` and hold the figures as images), walk the main window offscreen
   (open the sample, two runs, the history, compare them, go back to the first), and
   open the About dialog (bill of materials, licences) and the guide;
10. check that nothing tried to reach the network.

The temporary folder is removed afterwards. The exit code is 0 if every step passed,
1 otherwise.
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

__all__ = ["SELF_TEST_FLAG", "run_self_test", "write_html_report", "read_html_report",
           "write_sample_sav", "report_images"]

SELF_TEST_FLAG = "--self-test"
SAMPLE_NAME = "sample_survey.csv"
SAMPLE_RECORDS = 600
K = 5
K_SECOND = 10  # the main window's second run
SAV_NAME = "selftest_sample.sav"
LABELLED = "region"  # written to the .sav file as numeric codes with value labels
RUN_SECONDS = 60  # the longest a run of the main window may take


class NetworkBlocked(OSError):
    """Raised by every internet socket operation while the self-test runs."""


class _NoNetwork:
    """Make every Python-level internet connection or name lookup raise; count attempts."""

    def __init__(self):
        self.attempts: list[str] = []
        self._saved: list[tuple[object, str, object]] = []

    def _refuse(self, what: str) -> Callable:
        def refuse(*args, **kwargs):
            self.attempts.append(what)
            raise NetworkBlocked(f"network access attempted during the self-test ({what})")
        return refuse

    def _patch(self, owner, name: str, replacement) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, replacement)

    def __enter__(self):
        original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex
        refuse = self._refuse

        def connect(sock, address, *args):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                return refuse("socket.connect")(address)
            return original_connect(sock, address, *args)  # local (AF_UNIX) sockets

        def connect_ex(sock, address, *args):
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                return refuse("socket.connect_ex")(address)
            return original_connect_ex(sock, address, *args)

        self._patch(socket.socket, "connect", connect)
        self._patch(socket.socket, "connect_ex", connect_ex)
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_connection"):
            self._patch(socket, name, refuse(f"socket.{name}"))
        return self

    def __exit__(self, *exc_info):
        for owner, name, value in reversed(self._saved):
            setattr(owner, name, value)
        self._saved.clear()
        return False


class _Steps:
    """Runs the steps, prints one line each, remembers failures."""

    def __init__(self, out: TextIO):
        self.out = out
        self.failed: list[str] = []
        self.count = 0

    def line(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(self, name: str, step: Callable[[], object], *, needs: tuple = (),
            quiet: bool = False):
        """Run ``step``; its return value (a short detail string or a tuple whose first
        item is one) is printed after ``ok:``. Returns the step's value, or None.

        A ``quiet`` step prints only a failure, does not count as a step when it
        succeeds, and returns False (not None) when it fails.
        """
        if not quiet:
            self.count += 1
        if any(value is None for value in needs):
            self.failed.append(name)
            self.line(f"FAILED: {name} (an earlier step it needs failed)")
            return None
        try:
            value = step()
        except Exception as error:  # the point of a self-test: report, do not crash
            self.count += quiet
            self.failed.append(name)
            lines = str(error).strip().splitlines()
            self.line(f"FAILED: {name}: {type(error).__name__}: {lines[-1] if lines else ''}")
            return False if quiet else None
        if quiet:
            return value
        detail = value[0] if isinstance(value, tuple) else value
        self.line(f"ok: {name}" + (f": {detail}" if isinstance(detail, str) and detail else ""))
        return value


# -- the report ---------------------------------------------------------------------------


def write_html_report(result, path: str | os.PathLike, *, source: str = "",
                      **keywords) -> Path:
    """Write the product's HTML report of ``result`` (:func:`core.report.documents.write_report`;
    ``keywords`` are its other keywords, e.g. ``original``)."""
    from core.report.documents import write_report

    return write_report(result, path, source=source, **keywords)


def read_html_report(path: str | os.PathLike) -> dict[str, str]:
    """The (item → value) rows of a report written by :func:`write_html_report`."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows: dict[str, str] = {}
            self._cell: list[str] | None = None
            self._row: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag in ("th", "td"):
                self._cell = []
            elif tag == "tr":
                self._row = []

        def handle_endtag(self, tag):
            if tag in ("th", "td") and self._cell is not None:
                self._row.append("".join(self._cell))
                self._cell = None
            elif tag == "tr" and len(self._row) == 2:
                self.rows.setdefault(self._row[0], self._row[1])

        def handle_data(self, data):
            if self._cell is not None:
                self._cell.append(data)

    parser = Rows()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return parser.rows


# -- the steps ----------------------------------------------------------------------------


def _environment() -> str:
    frozen = "bundle" if getattr(sys, "frozen", False) else "source"
    return (f"MicroAgg Desktop self-test ({frozen}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.machine()}, "
            f"QT_QPA_PLATFORM={os.environ.get('QT_QPA_PLATFORM', '')})")


def _load_sample():
    from core import RoleSpec, read_table
    from microagg_desktop.paths import resource_path
    from microagg_desktop.state import SAMPLE_ROLES

    path = resource_path(SAMPLE_NAME)
    table = read_table(path)
    if len(table) != SAMPLE_RECORDS:
        raise AssertionError(f"{path.name} has {len(table)} records, {SAMPLE_RECORDS} expected")
    missing = set(SAMPLE_ROLES) - set(table.columns)
    if missing:
        raise AssertionError(f"{path.name} lacks the columns {sorted(missing)}")
    roles = RoleSpec.from_mapping(SAMPLE_ROLES)
    return f"{path.name}, {len(table)} records × {table.shape[1]} columns", table, roles


def _check_groups(result, k: int) -> None:
    import numpy as np

    sizes = np.bincount(np.unique(result.labels, return_inverse=True)[1])
    if sizes.min() < k:
        raise AssertionError(f"a group has {sizes.min()} records, fewer than k = {k}")
    if len(result.masked) != result.metrics.n_records:
        raise AssertionError("the masked table lost records")


def _run_mdav(table, roles):
    from core import anonymize

    before = table.copy()
    result = anonymize(table, roles, "mdav", k=K)
    if not table.equals(before):
        raise AssertionError("the input table was modified")
    _check_groups(result, K)
    return (f"k = {K}, {result.metrics.n_groups} groups, IL = {result.metrics.il:.2f} %",
            result)


def _run_mixed(table, roles):
    """MDAV with a nominal quasi-identifier: released categories are the original's."""
    from core import RoleSpec, anonymize
    from core.verify.kanonymity import verify_k_anonymity

    mixed = RoleSpec(quasi_identifiers=roles.quasi_identifiers + ("region",),
                     confidential=roles.confidential, identifiers=roles.identifiers)
    result = anonymize(table, mixed, "mdav", k=K)
    _check_groups(result, K)
    foreign = set(result.masked["region"]) - set(table["region"])
    if foreign:
        raise AssertionError(f"'region' released categories not in the sample: {foreign}")
    if not verify_k_anonymity(table, result.masked, mixed, K).passed:
        raise AssertionError("the mixed release did not verify")
    return (f"region nominal, {result.metrics.n_groups} groups, "
            f"IL = {result.metrics.il:.2f} %", result)


def _tcloseness_method():
    """tc-merge, named: the first ``tc-`` method of the registry depends on the order
    the methods were registered in (tc-bucket takes one confidential attribute, the
    sample has two)."""
    from core.methods.registry import methods

    available = {m.name: m for m in methods()}
    return available.get("tc-merge") or next(
        (m for name, m in available.items() if name.startswith("tc-") and name != "tc-bucket"),
        None)


def _run_tcloseness(table, roles, method):
    from core import anonymize

    names = {p.name for p in method.parameters}
    parameters = {"k": K} if "k" in names else {}
    result = anonymize(table, roles, method.name, **parameters)
    if "k" in names:
        _check_groups(result, K)
    t = result.parameters.get("t")
    return (f"{method.name}, {result.metrics.n_groups} groups, "
            f"IL = {result.metrics.il:.2f} %" + (f", t = {t:g}" if t is not None else ""),
            result)


def _verify(table, roles, results):
    from core.verify.tcloseness import verify_t_closeness
    from core.verify.kanonymity import verify_k_anonymity

    findings = []
    for result in results:
        k = result.parameters.get("k", K)
        verdict = verify_k_anonymity(table, result.masked, roles, k)
        if not verdict.passed:
            raise AssertionError(f"{result.method}: {verdict.describe()}")
        findings.append(f"{result.method} {k}-anonymous")
        t = result.parameters.get("t")
        if t is not None and roles.confidential:
            closeness = verify_t_closeness(result.masked, roles.quasi_identifiers,
                                           roles.confidential, t)
            if not closeness.passed:
                raise AssertionError(f"{result.method}: {closeness.describe()}")
            findings.append(f"{result.method} {t:g}-close")
    return ", ".join(findings)


def _export_xlsx(result, folder: Path):
    import numpy as np

    from core.io.read import read_table, sheet_names
    from core.report.documents import export_result

    path = export_result(result, folder / "selftest_masked.xlsx", source=SAMPLE_NAME)
    sheets = sheet_names(path)
    if "summary" not in sheets:
        raise AssertionError(f"{path.name} has no summary sheet (sheets: {sheets})")
    masked = read_table(path, sheet=sheets[0])
    if masked.shape != result.masked.shape or list(masked.columns) != \
            list(result.masked.columns):
        raise AssertionError(f"{path.name} read back as {masked.shape}, "
                             f"{result.masked.shape} expected")
    for column in result.roles.quasi_identifiers:
        if not np.allclose(masked[column].to_numpy(float),
                           result.masked[column].to_numpy(float)):
            raise AssertionError(f"{path.name}: column '{column}' differs from the result")
    summary = read_table(path, sheet="summary")
    items = dict(zip(summary.iloc[:, 0].astype(str), summary.iloc[:, 1].astype(str)))
    if items.get("Verified") != "yes":
        raise AssertionError(f"{path.name}: the summary does not say 'Verified: yes'")
    return f"{path.name}, {path.stat().st_size:,} bytes, {len(masked)} rows read back"


def report_images(page: str) -> int:
    """How many inline PNG figures the HTML ``page`` holds (each one decoded and checked)."""
    import base64
    import re

    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    for number, data in enumerate(images, 1):
        if not base64.b64decode(data).startswith(b"\x89PNG\r\n\x1a\n"):
            raise AssertionError(f"figure {number} of the report is not a PNG image")
    return len(images)


def _expected_figures(result, original) -> int:
    from core.report.html import report_figures

    return len(report_figures(result, original))


def _export_report(result, table, folder: Path):
    path = write_html_report(result, folder / "selftest_report.html", source=SAMPLE_NAME,
                             original=table)
    rows = read_html_report(path)
    if rows.get("Verified") != "yes" or rows.get("Records") != str(SAMPLE_RECORDS):
        raise AssertionError(f"{path.name} read back without 'Verified: yes' and "
                             f"'Records: {SAMPLE_RECORDS}'")
    figures, expected = report_images(path.read_text(encoding="utf-8")), \
        _expected_figures(result, table)
    if figures != expected or not figures:
        raise AssertionError(f"{path.name} holds {figures} figures, {expected} expected")
    return f"{path.name}, {len(rows)} summary rows, {figures} figures read back"


def write_sample_sav(table, path: str | os.PathLike) -> tuple[Path, list[str]]:
    """Write ``table`` as an SPSS file with pyreadstat, ``region`` as numeric codes with
    value labels (1 = the first region in sorted order...).

    Returns
    -------
    (Path, list of str)
        The file, and the labels in the order of their codes.
    """
    import pyreadstat

    labels = sorted(str(v) for v in table[LABELLED].dropna().unique())
    codes = {label: float(code) for code, label in enumerate(labels, 1)}
    frame = table.copy()
    frame[LABELLED] = table[LABELLED].astype(str).map(codes).astype(float)
    path = Path(path)
    pyreadstat.write_sav(frame, str(path),
                         variable_value_labels={LABELLED: {v: k for k, v in codes.items()}})
    return path, labels


def _read_sav(table, folder: Path):
    import numpy as np
    import pandas as pd

    from core import read_table
    from core.io.read_stat import read_stat  # noqa: F401 (the reader must be bundled)

    path, labels = write_sample_sav(table, folder / SAV_NAME)
    read = read_table(path)
    if read.shape != table.shape or list(read.columns) != list(table.columns):
        raise AssertionError(f"{path.name} read back as {read.shape}, {table.shape} "
                             "expected")
    column = read[LABELLED]
    if not isinstance(column.dtype, pd.CategoricalDtype):
        raise AssertionError(f"'{LABELLED}' was read as {column.dtype}, not as categories")
    if list(column.cat.categories) != labels:
        raise AssertionError(f"'{LABELLED}' has the categories "
                             f"{list(column.cat.categories)}, {labels} expected")
    if list(column.astype(str)) != list(table[LABELLED].astype(str)):
        raise AssertionError(f"'{LABELLED}' differs from the sample after the round trip")
    for name in table.columns:
        if pd.api.types.is_numeric_dtype(table[name]) and not np.allclose(
                read[name].to_numpy(float), table[name].to_numpy(float), equal_nan=True):
            raise AssertionError(f"column '{name}' differs from the sample")
    return (f"{path.name}, {len(read)} records, '{LABELLED}' read as "
            f"{len(labels)} labelled categories", path, read)


def _project(sav_path: Path, sav_table, roles, folder: Path, mdav_result=None):
    import pandas as pd

    from core import anonymize
    from core.project import Project, load_project, rerun, save_project

    result = anonymize(sav_table, roles, "mdav", k=K)
    _check_groups(result, K)
    if mdav_result is not None and abs(result.metrics.il - mdav_result.metrics.il) > 1e-9:
        raise AssertionError(f"MDAV on the .sav file gave IL {result.metrics.il:.6g} %, "
                             f"on the CSV {mdav_result.metrics.il:.6g} %")
    project = Project.for_data(sav_path, roles=roles)
    project.add_run(result)
    path = save_project(project, folder / "selftest.microagg")
    loaded = load_project(path)
    if [r.number for r in loaded.runs] != [1] or loaded.roles != roles:
        raise AssertionError(f"{path.name} read back with runs "
                             f"{[r.number for r in loaded.runs]} and other roles")
    again = rerun(loaded, 1)
    try:
        pd.testing.assert_frame_equal(again.masked, result.masked)
    except AssertionError:
        raise AssertionError("the re-run released another table than the saved run") \
            from None
    return (f"{path.name} saved, opened, run 1 re-run: the same release "
            f"(IL = {again.metrics.il:.2f} %)", path, result)


def _run_cli(folder: Path):
    from microagg_desktop.paths import resource_path

    output, summary = folder / "selftest_cli.csv", folder / "selftest_cli.json"
    arguments = ["anonymize", str(resource_path(SAMPLE_NAME)), "-o", str(output),
                 "--method", "mdav", "--k", str(K), "--identifier", "person_id",
                 "--qi", "age", "years_education", "income", "hours_worked",
                 "household_size", "--confidential", "health_spending", "diagnosis",
                 "--summary-json", str(summary)]
    facts = _cli(arguments, summary)
    if not facts.get("verified") or facts.get("min_group_size", 0) < K:
        raise AssertionError(f"the command line's summary is not verified: {facts}")
    return f"microagg anonymize → {output.name}, verified"


def _cli(arguments: list[str], summary: Path) -> dict:
    """Run the command line in-process; its JSON summary."""
    import json

    from core.cli.main import main as cli_main

    printed, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        code = cli_main(arguments)
    if code != 0:
        raise AssertionError(f"exit code {code}: {errors.getvalue().strip()}")
    return json.loads(summary.read_text(encoding="utf-8"))


def _run_rerun_cli(project_path: Path, saved_result, folder: Path):
    import numpy as np

    from core import read_table

    output, summary = folder / "selftest_rerun.csv", folder / "selftest_rerun.json"
    facts = _cli(["rerun", str(project_path), "--run", "1", "-o", str(output),
                  "--summary-json", str(summary), "--quiet"], summary)
    if not facts.get("verified"):
        raise AssertionError(f"the re-run's summary is not verified: {facts}")
    written = read_table(output)
    for column in saved_result.roles.quasi_identifiers:
        if not np.allclose(written[column].to_numpy(float),
                           saved_result.masked[column].to_numpy(float)):
            raise AssertionError(f"{output.name}: column '{column}' differs from the run")
    return f"microagg rerun {project_path.name} --run 1 → {output.name}, the same release"


def _bill_of_materials():
    """The About dialog's components: the bundle's CSV when frozen, else the installed
    distributions. Returns (detail, components)."""
    import csv

    from microagg_desktop import about

    components = about.bill_of_materials()
    names = {c.name.lower() for c in components}
    if len(components) < 2 or not all(c.name and c.version for c in components):
        raise AssertionError(f"the bill of materials is empty or incomplete: {components}")
    if getattr(sys, "frozen", False):
        path = about._bundle_file()
        if path is None:
            raise AssertionError(f"no {about.BOM_FILE} beside {Path(sys.executable).name}")
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        if len(rows) != len(components) or "pyreadstat" not in names:
            raise AssertionError(f"{path.name} has {len(rows)} rows; the About dialog "
                                 f"shows {len(components)} components")
        where = path.name
    else:
        where = "the installed distributions"
    if "numpy" not in names:
        raise AssertionError("the bill of materials does not list numpy")
    return f"{len(components)} components, from {where}", components


# -- the windowed launcher ----------------------------------------------------------------


def _application():
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "microagg"])


def _pdf_report(result, table, folder: Path):
    from microagg_desktop.pdf_report import write_pdf

    _application()
    path = write_pdf(result, folder / "selftest_report.pdf", source=SAMPLE_NAME,
                     original=table)
    data = path.read_bytes()
    if not data.startswith(b"%PDF-"):
        raise AssertionError(f"{path.name} does not start with %PDF- ({data[:8]!r})")
    images, expected = data.count(b"/Subtype /Image"), _expected_figures(result, table)
    if images < expected or not images:
        raise AssertionError(f"{path.name} holds {images} images, {expected} figures "
                             "expected")
    if b"/Font" not in data:
        raise AssertionError(f"{path.name} holds no font: its text is missing")
    return f"{path.name}, {len(data):,} bytes, {images} images"


def _wait_for(runner, start: Callable[[], bool], what: str) -> None:
    """Call ``start()`` (which starts a task on ``runner``) and wait for its end."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    runner.signals.finished.connect(loop.quit)
    try:
        if not start():
            raise AssertionError(f"{what} did not start")
        timer.start(RUN_SECONDS * 1000)
        loop.exec()  # the finished signal is queued: it cannot come before this
    finally:
        runner.signals.finished.disconnect(loop.quit)
        timer.stop()
    if runner.running:
        raise AssertionError(f"{what} took longer than {RUN_SECONDS} s")


def _main_window(folder: Path):
    from core.project import load_project
    from microagg_desktop.main_window import MainWindow

    app = _application()
    errors: list[str] = []
    window = MainWindow(store={})  # nothing is written to the user's settings
    window.show_error = errors.append  # no modal dialogs in a self-test
    window.ask_merge_strata = lambda *args: False
    window.ask_to_close = lambda reasons: "discard"
    window.ask_to_replace = lambda reasons: "discard"

    def check(condition: bool, message: str) -> None:
        if errors:
            raise AssertionError(errors[0].splitlines()[0])
        if not condition:
            raise AssertionError(message)

    try:
        window.show()
        check(window.open_sample() and window.table is not None,
              "the window could not open the sample")
        window.method_panel.set_method("mdav")
        for k in (K, K_SECOND):
            window.method_panel.set_parameter("k", k)
            _wait_for(window.runner, window.run, f"the run with k = {k}")
            check(window.result is not None and window.result.passed
                  and window.result.parameters.get("k") == k,
                  f"the run with k = {k} is not shown verified")
        numbers = [r.number for r in window.history.records]
        check(numbers == [1, 2], f"the history holds the runs {numbers}, not [1, 2]")

        # The History tab's buttons emit these signals with the selected runs.
        panel = window.history_panel
        panel.compare_requested.emit([1, 2])
        frame = window.compare_view.frame
        check(window.compare_view.numbers == [1, 2] and frame is not None
              and frame.shape[1] == 2, "the compare view does not show runs 1 and 2")
        check(window.tabs.currentWidget() is window.history_page,
              "Compare did not show the History tab")
        panel.restore_requested.emit(1)  # go back to run 1
        check(window.result is not None and window.result.parameters.get("k") == K
              and window.method_panel.parameters().get("k") == K,
              f"going back to run 1 did not restore k = {K}")

        check(window.save_project_to(folder / "selftest_window.microagg"),
              "the window could not save its project")
        saved = load_project(folder / "selftest_window.microagg")
        check([r.number for r in saved.runs] == [1, 2], "the window's project lost runs")
        app.processEvents()
        image = window.grab()
        check(not image.isNull() and image.width() > 0, "the window rendered nothing")
        il = [r.result.metrics.il for r in window.history.records]
        return (f"{app.platformName()}: runs k = {K}, {K_SECOND} (IL {il[0]:.2f} %, "
                f"{il[1]:.2f} %), compared, back to run 1, project saved, "
                f"{image.width()}×{image.height()} px")
    finally:
        window.runner.cancel()
        window.runner.wait(5000)
        window.close()
        window.deleteLater()
        app.processEvents()


def _help_dialogs():
    from microagg_desktop.help_dialogs import AboutDialog, GuideDialog

    app = _application()
    detail, components = _bill_of_materials()
    about, guide = AboutDialog(), GuideDialog()
    try:
        about.show()
        guide.show()
        app.processEvents()
        if about.components.rowCount() != len(components):
            raise AssertionError(f"About lists {about.components.rowCount()} components, "
                                 f"the bill of materials {len(components)}")
        licences = [about.tabs.widget(i).toPlainText() for i in range(about.tabs.count())
                    if hasattr(about.tabs.widget(i), "toPlainText")]
        if len(licences) < 2 or not all("GNU" in text for text in licences):
            raise AssertionError("About lacks the GPL or LGPL text")
        text = guide.browser.toPlainText()
        if len(text) < 200:
            raise AssertionError(f"the guide shows {len(text)} characters")
        return f"About: {detail}, {len(licences)} licences; guide: {len(text):,} characters"
    finally:
        for dialog in (about, guide):
            dialog.close()
            dialog.deleteLater()
        app.processEvents()


def _compiled_kernels():
    """MDAV on the compiled spatial index gives the numpy reference's labels: on 3,000
    records (timed, first call and again), then on 20,000 with the searches' helper
    thread where there are two processors (the count of searches it shared);
    tc-bucket's compiled class loop its reference's classes on the 3,000, and tc-merge's
    merging on two threads the reference's merges."""
    import numpy as np

    from core.compiled import COMPILED, numba_version
    from core.methods import spatial_parallel as parallel
    from core.methods.heuristics import fixed_size, fixed_size_reference
    from core.methods.spatial_heuristics import fixed_size_indexed

    if not COMPILED:
        raise AssertionError("the compiled kernels are not in use (numba is missing or "
                             "MICROAGG_NO_COMPILE is set)")
    X = np.random.default_rng(2026).normal(size=(3000, 5))
    began = time.perf_counter()
    first = fixed_size(X, k=5)
    first_seconds = time.perf_counter() - began
    began = time.perf_counter()
    again = fixed_size(X, k=5)
    again_seconds = time.perf_counter() - began
    if not (np.array_equal(first, fixed_size_reference(X, k=5)) and
            np.array_equal(again, first)):
        raise AssertionError("compiled MDAV gave other groups than the reference")
    threads = ""
    if parallel.helper_wanted(6):  # two processors: the searches' helper thread takes part
        bigger = np.random.default_rng(7).normal(size=(20_000, 5))
        expected = fixed_size_reference(bigger, k=5)
        for _ in range(5):  # the helper's loop may still be compiling in the first runs
            if not np.array_equal(fixed_size(bigger, k=5), expected):
                raise AssertionError("compiled MDAV on two threads gave other groups than "
                                     "the reference")
            if fixed_size_indexed.helped:
                break
        helped = fixed_size_indexed.helped
        threads = (f"; {helped:,} search{'es' if helped > 1 else ''} shared"
                   if helped else "; one thread: other busy")
    # tc-bucket's class loop, a compiled loop of its own (core.methods.bucket_loop)
    from core.methods import bucket
    values = X[:, 0] + np.random.default_rng(3).normal(size=len(X))
    compiled = bucket.tc_bucket(X, values, k=5, t=1.5).labels
    saved, bucket.COMPILED = bucket.COMPILED, False
    try:
        reference = bucket.tc_bucket(X, values, k=5, t=1.5).labels
    finally:
        bucket.COMPILED = saved
    if not np.array_equal(compiled, reference):
        raise AssertionError("compiled tc-bucket gave other classes than the reference")
    _merging_on_two_threads(X, values, first)
    return (f"numba {numba_version()}: MDAV equals the reference ({first_seconds:.1f} s / "
            f"{again_seconds:.3f} s{threads}); tc-bucket, tc-merge too")


def _merging_on_two_threads(X, values, base) -> None:
    """tc-merge's merging makes the reference's merges; where there are two processors,
    with its screen left to the helper thread (forced on this small table,
    core.methods.tclose_screen), which must have screened some of it."""
    import numpy as np

    from core.methods import tclose_merge, tclose_screen, tcloseness
    from core.privacy.attributes import tclose_attributes
    from core.progress import TaskState
    from core.threads import second_thread_allowed

    attributes = tclose_attributes(values)
    two = second_thread_allowed()
    if two:  # compiled before the run, as the warm-up does: a helper still compiling
        tclose_screen.compile_serve()  # its loop is given up on and screens nothing
    made = []

    class Helper(tclose_merge.TaskHelper):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    names = ("_two_threads", "TaskHelper")
    saved = [getattr(tclose_merge, name) for name in names] + [
        tclose_screen.SPLIT_FROM, tclose_screen._LEAVE_TO_HELPER, tclose_screen._PATIENCE]
    tclose_merge._two_threads, tclose_merge.TaskHelper = (lambda groups: two), Helper
    # Every chunk to the helper, waited for up to about 50 ms (a loaded machine).
    tclose_screen.SPLIT_FROM, tclose_screen._LEAVE_TO_HELPER = 2, True
    tclose_screen._PATIENCE = 200_000_000
    try:
        labels, merges = tclose_merge.merge_until_close(X, attributes, base, 0.1, TaskState(),
                                                        tcloseness._compact)
    finally:
        tclose_merge._two_threads, tclose_merge.TaskHelper = saved[:2]
        (tclose_screen.SPLIT_FROM, tclose_screen._LEAVE_TO_HELPER,
         tclose_screen._PATIENCE) = saved[2:]
    expected, expected_merges = tcloseness._merge_until_close(X, attributes, base, 0.1,
                                                              TaskState())
    if not (np.array_equal(labels, expected) and merges == expected_merges):
        raise AssertionError("compiled tc-merge on two threads merged otherwise than the "
                             "reference")
    if two and not made[0].served:
        raise AssertionError("tc-merge's helper thread screened nothing")


def _warm_up_packaged():
    """The first start's warm-up is in the bundle and would call this very program."""
    from core.methods.registry import methods
    from core.pipeline import warmup
    from microagg_desktop.engine_warmup import warm_up_command

    program, arguments = warm_up_command()
    if "--warm-up" not in arguments or not Path(program).exists():
        raise AssertionError(f"the warm-up command is wrong: {program} {arguments}")
    runs = sum(len(warmup._settings(method)) for method in methods())
    return f"{runs} method settings to compile, through {Path(program).name} --warm-up"


# -- the entry point ----------------------------------------------------------------------


def run_self_test(*, gui: bool, out: TextIO | None = None) -> int:
    """Run every step, print one line per step to ``out``; return 0 if all passed, else 1.

    Parameters
    ----------
    gui : bool
        True for the windowed launcher: also construct the main window offscreen.
        False for the console launcher: run the command line in-process instead.
    out : text stream, optional
        Where the lines go; ``sys.stdout`` by default. A windowed launcher on Windows
        has no stdout; the lines then go to ``self-test.txt`` in the system's
        temporary folder.

    Examples
    --------
    >>> run_self_test(gui=False)  # doctest: +SKIP
    ok: load the sample: sample_survey.csv, 600 records × 9 columns
    ...
    """
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if out is None:
        out = sys.stdout
    if out is None:  # windowed launcher without a console
        with open(Path(tempfile.gettempdir()) / "microagg-self-test.txt", "w",
                  encoding="utf-8") as handle:
            return run_self_test(gui=gui, out=handle)

    steps = _Steps(out)
    steps.line(_environment())
    with _NoNetwork() as network, tempfile.TemporaryDirectory(prefix="microagg-selftest-") \
            as temporary:
        folder = Path(temporary)
        loaded = steps.run("load the sample", _load_sample)
        table, roles = (loaded[1], loaded[2]) if loaded else (None, None)
        mdav = steps.run("run MDAV", lambda: _run_mdav(table, roles), needs=(table,))
        mdav_result = mdav[1] if mdav else None
        steps.run("run MDAV with a nominal quasi-identifier",
                  lambda: _run_mixed(table, roles), needs=(table,))
        steps.run("run the compiled kernels", _compiled_kernels)
        steps.run("find the first start's warm-up", _warm_up_packaged)

        results = [mdav_result] if mdav_result is not None else []
        method = steps.run("find a t-closeness method", _tcloseness_method, quiet=True)
        if method is False:
            pass  # the registry could not be read: reported as FAILED above
        elif method is None:
            steps.line("skipped: t-closeness: no t-closeness method (tc-*) is registered "
                       "in this version")
        else:
            closeness = steps.run(f"run t-closeness ({method.name})",
                                  lambda: _run_tcloseness(table, roles, method),
                                  needs=(table,))
            results.append(closeness[1] if closeness else None)

        steps.run("verify", lambda: _verify(table, roles, results),
                  needs=(table, *results) if results else (None,))
        steps.run("export XLSX and read it back", lambda: _export_xlsx(mdav_result, folder),
                  needs=(mdav_result,))
        steps.run("export the report and read it back",
                  lambda: _export_report(mdav_result, table, folder), needs=(mdav_result,))
        sav = steps.run("read an SPSS file", lambda: _read_sav(table, folder), needs=(table,))
        sav_path, sav_table = (sav[1], sav[2]) if sav else (None, None)
        project = steps.run("save, open and re-run a project",
                            lambda: _project(sav_path, sav_table, roles, folder, mdav_result),
                            needs=(sav_path,))
        project_path, project_result = (project[1], project[2]) if project else (None, None)
        if gui:
            steps.run("write the PDF report", lambda: _pdf_report(mdav_result, table, folder),
                      needs=(mdav_result,))
            steps.run("walk the main window offscreen", lambda: _main_window(folder))
            steps.run("open About and the guide", _help_dialogs)
        else:
            steps.run("run the command line", lambda: _run_cli(folder))
            steps.run("run microagg rerun on the project",
                      lambda: _run_rerun_cli(project_path, project_result, folder),
                      needs=(project_path,))
            steps.run("read the bill of materials", lambda: _bill_of_materials()[0])

        def offline():
            if network.attempts:
                raise AssertionError(f"{len(network.attempts)} attempt(s): "
                                     f"{', '.join(sorted(set(network.attempts)))}")
            return "no network access was attempted"

        steps.run("offline", offline)

    if steps.failed:
        steps.line(f"self-test FAILED: {len(steps.failed)} of {steps.count} steps failed")
        return 1
    steps.line(f"self-test passed: {steps.count} steps")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m microagg_desktop.selftest [--gui]``."""
    argv = sys.argv[1:] if argv is None else argv
    return run_self_test(gui="--gui" in argv)


if __name__ == "__main__":
    sys.exit(main())
