"""The method page's "Advanced" choice: run blocked on a Dask cluster.

A table too large for one machine is cut into spatial blocks of about N records
(a 2^d-tree, Solé, Muntés-Mulero & Nin 2012), each block is microaggregated on a Dask
worker with the chosen method, and the release is verified as a whole
(:func:`core.cluster.anonymize_blocked`). Without a scheduler address a local cluster
is started on this computer (loopback only). The release is written as a folder of
parts; the window shows the blocked run's own summary, computed on what was written.
"""

from __future__ import annotations

import importlib.util

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QSpinBox, QWidget

from core.cluster import DEFAULT_BLOCK_SIZE
from core.progress import TaskState

__all__ = ["ClusterBox", "dask_available", "run_blocked", "blocked_summary"]

INSTALL_HINT = ("Dask is not installed. Install the cluster extra: "
                "pip install 'microagg-desktop[cluster]'")


def dask_available() -> bool:
    """Whether the cluster extra (dask and distributed) is installed (never imports it)."""
    try:
        return all(importlib.util.find_spec(name) is not None
                   for name in ("dask", "distributed"))
    except (ImportError, ValueError):  # a frozen bundle's finder may refuse the name
        return False


class ClusterBox(QGroupBox):
    """Checkable group: off runs on this computer; on runs blocked on Dask."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Advanced: run blocked on a Dask cluster (very large files)", parent)
        self.setCheckable(True)
        self.setChecked(False)
        self.setAccessibleName("Run blocked on a Dask cluster")
        self.setToolTip("Cut the records into spatial blocks and microaggregate each block "
                        "on a Dask worker; the release is verified as a whole.")
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.scheduler_edit = QLineEdit(self)
        self.scheduler_edit.setMinimumWidth(320)
        self.scheduler_edit.setPlaceholderText("empty: a local cluster on this computer")
        self.scheduler_edit.setAccessibleName("Scheduler address")
        self.scheduler_edit.setToolTip("Address of a running Dask scheduler, e.g. "
                                       "tcp://10.0.0.5:8786. Empty starts a local cluster "
                                       "that only listens on this computer.")
        self.block_spin = QSpinBox(self)
        self.block_spin.setRange(10, 100_000_000)
        self.block_spin.setSingleStep(1000)
        self.block_spin.setValue(DEFAULT_BLOCK_SIZE)
        self.block_spin.setAccessibleName("Records per block")
        self.block_spin.setToolTip("At most about this many records per block (at least 2k); the "
                                   "blocks come out nearly equal in size. "
                                   "Larger blocks lose less information and take longer.")
        note = QLabel(
            "Each block is microaggregated on its own, so groups never cross a block "
            "boundary: information loss is a little higher than one run over the whole "
            "table. Strata are blocks of their own. The release is written as a folder "
            "of parts, and k-anonymity is verified over all of it.", self)
        note.setWordWrap(True)
        note.setStyleSheet("color: #555")
        form.addRow("Scheduler:", self.scheduler_edit)
        form.addRow("Records per block:", self.block_spin)
        form.addRow("", note)
        if not dask_available():
            self.setEnabled(False)
            self.setToolTip(INSTALL_HINT)
            note.setText(INSTALL_HINT)
        self.toggled.connect(lambda _: self.changed.emit())
        self.scheduler_edit.textChanged.connect(lambda _: self.changed.emit())
        self.block_spin.valueChanged.connect(lambda _: self.changed.emit())

    def options(self) -> dict | None:
        """``{"scheduler": ..., "block_size": ...}`` when blocked, else None."""
        if not (self.isEnabled() and self.isChecked()):
            return None
        return {"scheduler": self.scheduler_edit.text().strip() or None,
                "block_size": self.block_spin.value()}


def run_blocked(table, *, state: TaskState, roles, method, output, scheduler, block_size,
                parameters, blocks=None):
    """The worker's task for a blocked run (Dask is imported only here)."""
    from core.cluster import anonymize_blocked
    return anonymize_blocked(table, roles, method, output=output, scheduler=scheduler,
                             block_size=block_size, blocks=blocks, state=state, **parameters)


def blocked_refusals(request: dict) -> list[str]:
    """The settings of ``request`` a blocked run does not apply (the command line's
    ``--engine dask`` refuses the same): a blocked run is refused while any is set, so
    that it never releases without what the tabs promise."""
    refused = []
    if request.get("dp_epsilon") is not None:
        refused.append("Laplace noise on the confidential columns")
    if request.get("missing") == "exclude":
        refused.append("releasing records with missing values unmasked (Data tab)")
    if request.get("intruder", "all") != "all":
        refused.append("an intruder who knows only some quasi-identifiers")
    return refused


def blocked_summary(result) -> str:
    """Plain-language lines about a :class:`core.cluster.BlockedResult`."""
    verification = result.verification
    verdict = ("verified over the whole release" if verification.passed
               else "NOT verified")
    smallest, mean, largest = result.block_sizes
    lines = [
        f"{result.n_records:,} records in {result.n_blocks:,} blocks "
        f"(smallest {smallest:,}, mean {mean:,}, largest {largest:,}), "
        f"{result.n_groups:,} groups of {result.min_group_size} to "
        f"{result.max_group_size} records.",
        f"k-anonymity: {verdict}.",
        f"Information loss IL = {result.il:.3f} % (SSE/SST over all blocks).",
        f"Written to {result.output} ({result.output_format}).",
        f"Scheduler: {'a local cluster on this computer' if result.local_cluster else result.scheduler}; "
        f"{result.seconds:.1f} s.",
    ]
    if result.warnings:  # first: what to read before publishing what was written
        lines = ["⚠ Read before publishing:", *(f"⚠ {w.message}" for w in result.warnings),
                 "", *lines]
    return "\n".join(lines)
