"""``--self-test``: check that this copy of the application works, offline and headless.

Both launchers of the packaged application accept ``--self-test`` (``microagg-desktop
--self-test`` and ``microagg --self-test``); in a source checkout run
``python -m microagg_desktop.selftest [--gui]``. The test needs no display (Qt's
``offscreen`` platform is used unless ``QT_QPA_PLATFORM`` is set) and no network: any
attempt to open an internet socket from Python raises and fails the test.

Steps, one line each (``ok: ...``, ``FAILED: ...`` or ``skipped: ...``):

1. load the bundled sample survey;
2. run MDAV (k = 5);
3. run one t-closeness method (the first registered ``tc-*`` method), if any is
   registered; otherwise say so and go on;
4. verify k-anonymity (and t-closeness) independently of the methods;
5. export the MDAV result to XLSX with :func:`core.report.documents.export_result` in a temporary
   folder and read it back;
6. write a small HTML report of the summary there and read it back;
7. run the command line in-process (console launcher) or construct the main window
   offscreen, open the sample in it and show the result (windowed launcher);
8. check that nothing tried to reach the network.

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
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

__all__ = ["SELF_TEST_FLAG", "run_self_test", "write_html_report", "read_html_report"]

SELF_TEST_FLAG = "--self-test"
SAMPLE_NAME = "sample_survey.csv"
SAMPLE_RECORDS = 600
K = 5


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


def write_html_report(result, path: str | os.PathLike, *, source: str = "") -> Path:
    """Write the product's HTML report of ``result`` (:func:`core.report.documents.write_report`)."""
    from core.report.documents import write_report

    return write_report(result, path, source=source)


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
    from core.methods.registry import methods

    return next((m for m in methods() if m.name.startswith("tc-")), None)


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


def _export_report(result, folder: Path):
    path = write_html_report(result, folder / "selftest_report.html", source=SAMPLE_NAME)
    rows = read_html_report(path)
    if rows.get("Verified") != "yes" or rows.get("Records") != str(SAMPLE_RECORDS):
        raise AssertionError(f"{path.name} read back without 'Verified: yes' and "
                             f"'Records: {SAMPLE_RECORDS}'")
    return f"{path.name}, {len(rows)} summary rows read back"


def _run_cli(folder: Path):
    import json

    from core.cli.main import main as cli_main
    from microagg_desktop.paths import resource_path

    output, summary = folder / "selftest_cli.csv", folder / "selftest_cli.json"
    arguments = ["anonymize", str(resource_path(SAMPLE_NAME)), "-o", str(output),
                 "--method", "mdav", "--k", str(K), "--identifier", "person_id",
                 "--qi", "age", "years_education", "income", "hours_worked",
                 "household_size", "--confidential", "health_spending", "diagnosis",
                 "--summary-json", str(summary)]
    printed, errors = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        code = cli_main(arguments)
    if code != 0:
        raise AssertionError(f"exit code {code}: {errors.getvalue().strip()}")
    facts = json.loads(summary.read_text(encoding="utf-8"))
    if not facts.get("verified") or facts.get("min_group_size", 0) < K:
        raise AssertionError(f"the command line's summary is not verified: {facts}")
    return f"microagg anonymize → {output.name}, verified"


def _main_window(mdav_result):
    from PySide6.QtWidgets import QApplication

    from microagg_desktop.main_window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "microagg"])
    errors: list[str] = []
    window = MainWindow()
    window.show_error = errors.append  # no modal dialogs in a self-test
    try:
        window.show()
        if not window.open_sample() or window.table is None:
            raise AssertionError(f"the window could not open the sample: {errors}")
        window.results_panel.show_result(mdav_result)
        app.processEvents()
        image = window.grab()
        if image.isNull() or image.width() == 0:
            raise AssertionError("the window rendered an empty image")
        if errors:
            raise AssertionError(errors[0])
        return (f"main window ({app.platformName()}) opened the sample and showed the "
                f"result, {image.width()}×{image.height()} px")
    finally:
        window.close()
        window.deleteLater()
        app.processEvents()


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
                  lambda: _export_report(mdav_result, folder), needs=(mdav_result,))
        if gui:
            steps.run("construct the main window offscreen", lambda: _main_window(mdav_result),
                      needs=(mdav_result,))
        else:
            steps.run("run the command line", lambda: _run_cli(folder))

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
