"""The method wizard, built entirely from the registry (:func:`core.methods`).

One drop-down lists every registered method, grouped by what it guarantees (group
headers cannot be chosen); the panel explains the chosen method's guarantee in plain
words, cites its paper, and shows one input per parameter, chosen from the parameter's
constraint: an integer interval gives a spin box, a real interval a decimal spin box, a
set of options a drop-down. Values carry over between methods where they mean the same
thing (:mod:`.wizard_state`). A *What will happen* box says what a run will do with the
table at hand. A method added to the registry appears in its group with no change here.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QFrame, QGroupBox,
                               QLabel, QLineEdit, QScrollArea, QSpinBox, QVBoxLayout,
                               QWidget)

from core import RoleSpec
from core.methods.registry import get_method, methods
from core.methods.registry import Interval, Options, Parameter
from microagg_desktop.cluster_panel import ClusterBox
from microagg_desktop.estimate import QuasiIdentifiers, method_share
from microagg_desktop.state import MethodState
from microagg_desktop.wizard_state import (group_methods, guarantee_text,
                                           parameter_tooltip, run_parts, run_seconds,
                                           what_will_happen)

__all__ = ["MethodPanel", "parameter_widget", "grouped_method_model"]

_INT_LIMIT = 2**31 - 1
INTRUDER_CHOICES = (
    ("all", "all quasi-identifiers"),
    ("singles", "each quasi-identifier alone"),
    ("pairs", "every pair of quasi-identifiers"),
    ("random", "10 random subsets of half of them"),
)
_FLOAT_LIMIT = 1e12


def parameter_widget(parameter: Parameter, parent: QWidget | None = None) -> QWidget:
    """An input widget for ``parameter``, limited to its constraint, set to its default."""
    constraint = parameter.constraint
    if isinstance(constraint, Options):
        widget = QComboBox(parent)
        widget.addItems([str(v) for v in constraint.values])
        widget.setCurrentIndex(max(0, widget.findText(str(parameter.default))))
    elif isinstance(constraint, Interval) and constraint.kind is int:
        widget = QSpinBox(parent)
        widget.setRange(int(constraint.low) if constraint.low is not None else -_INT_LIMIT,
                        int(constraint.high) if constraint.high is not None else _INT_LIMIT)
        widget.setValue(int(parameter.default))
    elif isinstance(constraint, Interval):
        widget = QDoubleSpinBox(parent)
        widget.setDecimals(4)
        # An open end is excluded: the spin box stops one displayed step inside it.
        inside = 10.0 ** -widget.decimals()
        low = -_FLOAT_LIMIT if constraint.low is None else \
            constraint.low + (inside if constraint.low_open else 0.0)
        high = _FLOAT_LIMIT if constraint.high is None else \
            constraint.high - (inside if constraint.high_open else 0.0)
        widget.setRange(low, high)
        widget.setSingleStep(_float_step(constraint))
        widget.setValue(float(parameter.default))
    else:
        raise TypeError(f"No widget for the constraint of parameter '{parameter.name}'.")
    widget.setToolTip(parameter_tooltip(parameter))
    widget.setAccessibleName(parameter.label or parameter.name)
    widget.setMinimumWidth(120)
    return widget


def grouped_method_model(parent=None) -> QStandardItemModel:
    """Every registered method under a header naming its guarantee.

    Headers are neither selectable nor enabled, so the keyboard and the mouse skip
    them; a method item holds its registry name as ``UserRole`` data.
    """
    model = QStandardItemModel(parent)
    for group in group_methods(methods()):
        header = QStandardItem(group.title)
        header.setFlags(Qt.ItemFlag.NoItemFlags)
        font = QFont()
        font.setBold(True)
        header.setFont(font)
        header.setAccessibleText(f"Methods that guarantee {group.guarantee.label}")
        model.appendRow(header)
        for method in group.methods:
            item = QStandardItem("    " + method.label)
            item.setData(method.name, Qt.ItemDataRole.UserRole)
            item.setToolTip(method.description)
            item.setAccessibleText(f"{method.label} ({group.guarantee.label})")
            model.appendRow(item)
    return model


def _float_step(constraint: Interval) -> float:
    if constraint.low is not None and constraint.high is not None:
        return max((constraint.high - constraint.low) / 100, 1e-4)
    return 0.1


def _widget_value(widget: QWidget) -> Any:
    if isinstance(widget, QComboBox):
        return widget.currentText()
    return widget.value()


def _set_widget_value(widget: QWidget, value: Any) -> None:
    if isinstance(widget, QComboBox):
        position = widget.findText(str(value))
        if position < 0:
            raise ValueError(f"'{value}' is not one of the choices.")
        widget.setCurrentIndex(position)
    else:
        widget.setValue(value)


def _note(text: str, parent: QWidget, name: str, colour: str = "#555") -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setStyleSheet(f"color: {colour};")
    label.setAccessibleName(name)
    return label


class MethodPanel(QWidget):
    """The Method tab: the method by guarantee, what it promises, its parameters, and
    what a run will do.

    Signals
    -------
    changed
        After the method, any parameter, the blocks or the noise options changed.
    """

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.state = MethodState()
        self.n_records = 0
        self.attributes: QuasiIdentifiers | None = None
        self.roles_spec: RoleSpec | None = None
        self.method_box = QComboBox(self)
        self.method_box.setModel(grouped_method_model(self.method_box))
        self.method_box.setAccessibleName("Method")
        self.method_box.setToolTip("The microaggregation method, grouped by what it "
                                   "guarantees about the released table.")
        self.method_box.setMaxVisibleItems(24)
        self.guarantee_box = QGroupBox("What this method guarantees", self)
        guarantee_layout = QVBoxLayout(self.guarantee_box)
        self.guarantee_label = _note("", self.guarantee_box, "Guarantee", "#000")
        self.guarantee_label.setToolTip("The promise about the released table, in words "
                                        "for the people who approve the release.")
        self.reference = _note("", self.guarantee_box, "Reference")
        self.reference.setToolTip("The paper that defines the method.")
        self.description = _note("", self.guarantee_box, "How the method works", "#000")
        self.description.setToolTip("How the method forms its groups.")
        guarantee_layout.addWidget(self.guarantee_label)
        guarantee_layout.addWidget(self.description)
        guarantee_layout.addWidget(self.reference)
        self.parameter_box = QGroupBox("Parameters", self)
        parameter_layout = QVBoxLayout(self.parameter_box)
        self.parameter_form = QFormLayout()
        self.parameter_form.setFieldGrowthPolicy(
            QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.carry_note = _note("", self.parameter_box, "Parameter notes", "#8a4b00")
        self.carry_note.setToolTip("Values that could not be kept from the previous "
                                   "method.")
        parameter_layout.addLayout(self.parameter_form)
        parameter_layout.addWidget(self.carry_note)
        self.widgets: dict[str, QWidget] = {}
        self.forecast_box = QGroupBox("What will happen", self)
        forecast_layout = QVBoxLayout(self.forecast_box)
        self.forecast = _note("", self.forecast_box, "What will happen", "#000")
        self.forecast.setToolTip("What a run with these settings will do with the table "
                                 "and roles chosen; updated as they change.")
        forecast_layout.addWidget(self.forecast)

        self.method_box.setMinimumWidth(300)
        choice = QFormLayout()
        choice.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        method_label = QLabel("&Method:", self)
        method_label.setBuddy(self.method_box)
        choice.addRow(method_label, self.method_box)
        # The page scrolls rather than squeezing its groups when the window is small.
        content = QWidget(self)
        layout = QVBoxLayout(content)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)
        layout.addLayout(choice)
        layout.addWidget(self.guarantee_box)
        layout.addWidget(self.parameter_box)
        layout.addWidget(self.forecast_box)

        self.blocks_box = QGroupBox("Attribute blocks (optional)", self)
        blocks_form = QFormLayout(self.blocks_box)
        self.blocks_edit = QLineEdit(self.blocks_box)
        self.blocks_edit.setPlaceholderText("e.g.  age,income ; hours_worked,years_education")
        self.blocks_edit.setMinimumWidth(420)
        self.blocks_edit.setAccessibleName("Attribute blocks")
        self.blocks_edit.setToolTip("Quasi-identifiers separated by commas, blocks by "
                                    "semicolons; empty for one block of all.")
        self.blocks_edit.textChanged.connect(lambda _: self.changed.emit())
        blocks_help = _note(
            "Leave empty to microaggregate all quasi-identifiers together. With blocks "
            "(columns separated by commas, blocks by semicolons), each block is "
            "microaggregated on its own: information loss is lower, but k-anonymity then "
            "holds within each block only, not for the combination.", self.blocks_box,
            "About attribute blocks")
        blocks_form.addRow("Blocks:", self.blocks_edit)
        blocks_form.addRow("", blocks_help)
        layout.addWidget(self.blocks_box)

        risk_box = QGroupBox("Disclosure-risk measures", self)
        risk_form = QFormLayout(risk_box)
        risk_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.intruder_box = QComboBox(risk_box)
        for value, text in INTRUDER_CHOICES:
            self.intruder_box.addItem(text, value)
        self.intruder_box.setAccessibleName("What the intruder knows")
        self.intruder_box.setToolTip("The sets of quasi-identifiers the intruder is "
                                     "assumed to know for record linkage.")
        self.intruder_box.currentIndexChanged.connect(lambda _: self.changed.emit())
        risk_help = _note(
            "Record linkage (DLD) and interval disclosure (ID) are computed for each set "
            "of attributes the intruder is assumed to know; the results give each "
            "scenario and their mean.", risk_box, "About the risk measures")
        risk_form.addRow("The intruder knows:", self.intruder_box)
        risk_form.addRow("", risk_help)
        layout.addWidget(risk_box)

        self.dp_box = QGroupBox("Differential privacy for the confidential attributes "
                                "(optional)", self)
        self.dp_box.setCheckable(True)
        self.dp_box.setChecked(False)
        self.dp_box.setAccessibleName("Differential privacy for the confidential "
                                      "attributes")
        self.dp_box.setToolTip("Add Laplace noise to the confidential attributes after "
                               "a k-anonymity method.")
        self.dp_box.toggled.connect(lambda _: self.changed.emit())
        dp_form = QFormLayout(self.dp_box)
        dp_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.epsilon_spin = QDoubleSpinBox(self.dp_box)
        self.epsilon_spin.setDecimals(3)
        self.epsilon_spin.setRange(0.001, 100.0)
        self.epsilon_spin.setValue(1.0)
        self.epsilon_spin.setAccessibleName("Epsilon")
        self.epsilon_spin.setToolTip("Privacy level ε: smaller means more noise and more "
                                     "privacy. Allowed: 0.001 to 100.")
        self.epsilon_spin.valueChanged.connect(lambda _: self.changed.emit())
        self.bounds_edit = QLineEdit(self.dp_box)
        self.bounds_edit.setMinimumWidth(420)
        self.bounds_edit.setPlaceholderText("e.g.  health_spending=0:5000")
        self.bounds_edit.setAccessibleName("Bounds of the confidential attributes")
        self.bounds_edit.setToolTip("COLUMN=LO:HI for each confidential attribute, "
                                    "separated by commas; never taken from the data.")
        self.seed_spin = QSpinBox(self.dp_box)
        self.seed_spin.setRange(-1, _INT_LIMIT)  # -1: a fresh seed for every run
        self.seed_spin.setSpecialValueText("fresh for every run")
        self.seed_spin.setValue(-1)
        self.seed_spin.setMinimumWidth(180)
        self.seed_spin.setAccessibleName("Noise seed")
        self.seed_spin.setToolTip(
            "Leave at 'fresh for every run': the noise then comes from the operating "
            "system's randomness. Whoever knows the seed can subtract the noise, so fix "
            "one only to repeat a run, and never publish it. A saved project keeps each "
            "run's seed, to recompute it.")
        dp_help = _note(
            "After a k-anonymity method, Laplace noise of scale (HI − LO)/ε is added to "
            "every confidential attribute. Give the bounds LO:HI of each one: they are "
            "never taken from the data. The report states the stochastic t that this "
            "guarantees (Proposition 1).", self.dp_box, "About the noise")
        dp_form.addRow("ε (epsilon):", self.epsilon_spin)
        dp_form.addRow("Bounds:", self.bounds_edit)
        dp_form.addRow("Noise seed:", self.seed_spin)
        dp_form.addRow("", dp_help)
        layout.addWidget(self.dp_box)
        self.cluster_box = ClusterBox(self)
        self.cluster_box.changed.connect(self.changed.emit)
        layout.addWidget(self.cluster_box)
        layout.addStretch(1)
        self.method_box.currentIndexChanged.connect(self._on_method_chosen)
        self.changed.connect(self._show_forecast)
        self._select_in_box(self.state.method)
        self._show_method()

    # -- public API ----------------------------------------------------------------------

    def method_name(self) -> str:
        """Registry name of the chosen method."""
        return self.state.method

    def set_method(self, name: str) -> None:
        """Choose a method by registry name; values it allows are kept (see
        :class:`.state.MethodState`), the others go back to their defaults."""
        self._select_in_box(get_method(name).name)

    def parameters(self) -> dict[str, Any]:
        """The parameter values as entered (checked by the registry when run)."""
        return dict(self.state.values)

    def notes(self) -> list[str]:
        """Why some values were not kept when the method last changed."""
        return list(self.state.notes)

    def set_context(self, n_records: int, roles: RoleSpec | None,
                    attributes: QuasiIdentifiers | None = None) -> None:
        """The table's size and roles, for *What will happen* (call on every change);
        ``attributes``, what the quasi-identifiers are, for the time estimate
        (:func:`~.wizard_state.quasi_identifiers`; without it each counts as one numeric
        attribute)."""
        self.n_records = max(0, int(n_records))
        self.roles_spec = roles
        self.attributes = attributes
        self._show_forecast()

    def forecast_lines(self) -> list[str]:
        """The sentences *What will happen* shows."""
        return what_will_happen(get_method(self.state.method), self.state.values,
                                n_records=self.n_records, roles=self.roles_spec,
                                blocks=self.blocks(), noise=self.noise_options() or None,
                                attributes=self.attributes,
                                block_size=(self.cluster_box.options() or {}).get(
                                    "block_size"))

    def run_seconds(self, parameter: str, value: Any) -> float | None:
        """The estimated seconds of a run with these settings but ``parameter`` at
        ``value`` (a sweep's point), or None when it cannot be estimated yet."""
        return run_seconds(get_method(self.state.method),
                           {**self.state.values, parameter: value}, self.n_records,
                           self._estimated_attributes())

    def method_share(self) -> float | None:
        """The share of the run with these settings that the method is expected to take
        (:func:`~microagg_desktop.estimate.method_share`), for the progress bar; None
        when it cannot be estimated."""
        return method_share(run_parts(get_method(self.state.method), self.state.values,
                                      self.n_records, self._estimated_attributes()))

    def _estimated_attributes(self) -> "int | QuasiIdentifiers":
        """What the time estimate knows of the quasi-identifiers: what they are, or
        (before the data tab has described them) how many."""
        if self.attributes is not None:
            return self.attributes
        return len(self.roles_spec.quasi_identifiers) if self.roles_spec is not None else 0

    def blocks(self) -> str | None:
        """The attribute blocks as typed ("A,B;C,D"), or None for one block of all."""
        if self.blocks_box.isHidden():  # the chosen method takes no blocks
            return None
        text = self.blocks_edit.text().strip()
        return text or None

    def set_blocks(self, text: str) -> None:
        self.blocks_edit.setText(text)

    def noise_options(self) -> dict[str, Any]:
        """``dp_epsilon``, ``confidential_bounds`` and ``noise_seed`` (None: fresh for
        the run) for anonymize(), if chosen."""
        if self.dp_box.isHidden() or not self.dp_box.isChecked():
            return {}
        seed = self.seed_spin.value()
        return {"dp_epsilon": self.epsilon_spin.value(),
                "confidential_bounds": self.bounds_edit.text().strip() or None,
                "noise_seed": None if seed < 0 else seed}

    def set_noise(self, epsilon: float, bounds: str, seed: int | None = None) -> None:
        """Noise on, with ``seed`` fixed, or (None) fresh for every run."""
        self.dp_box.setChecked(True)
        self.epsilon_spin.setValue(epsilon)
        self.bounds_edit.setText(bounds)
        self.seed_spin.setValue(-1 if seed is None else seed)

    def clear_noise(self) -> None:
        """No differential-privacy noise (going back to a run without it)."""
        self.dp_box.setChecked(False)

    def intruder(self) -> str:
        """The intruder scenario preset for the risk measures ("all", "pairs", ...)."""
        return self.intruder_box.currentData()

    def set_intruder(self, value: str) -> None:
        position = self.intruder_box.findData(value)
        if position < 0:
            raise ValueError(f"'{value}' is not an intruder scenario.")
        self.intruder_box.setCurrentIndex(position)

    def set_parameter(self, name: str, value: Any) -> None:
        """Set a parameter as if typed in its widget; ``KeyError`` if there is none."""
        if name not in self.widgets:
            raise KeyError(f"Method '{self.state.method}' has no parameter '{name}'.")
        _set_widget_value(self.widgets[name], value)

    # -- building ------------------------------------------------------------------------

    def _select_in_box(self, name: str) -> None:
        position = self.method_box.findData(name)
        if position >= 0:
            self.method_box.setCurrentIndex(position)

    def _on_method_chosen(self, position: int) -> None:
        name = self.method_box.itemData(position)
        if name and name != self.state.method:
            self.state.set_method(name)
            self._show_method()
            self.changed.emit()

    def _show_method(self) -> None:
        spec = get_method(self.state.method)
        self.guarantee_box.setTitle(f"What {spec.label} guarantees")
        self.description.setText(spec.description)
        self.reference.setText(f"Reference: {spec.reference}" if spec.reference else "")
        self.reference.setVisible(bool(spec.reference))
        while self.parameter_form.rowCount():
            self.parameter_form.removeRow(0)
        self.widgets = {}
        for parameter in spec.parameters:
            widget = parameter_widget(parameter, self.parameter_box)
            _set_widget_value(widget, self.state.values[parameter.name])
            self.widgets[parameter.name] = widget
            label = QLabel(f"{parameter.label or parameter.name}:", self.parameter_box)
            label.setToolTip(parameter_tooltip(parameter))
            label.setBuddy(widget)
            self.parameter_form.addRow(label, widget)
            if parameter.help:
                help_label = _note(parameter.help, self.parameter_box,
                                   f"About {parameter.label or parameter.name}")
                help_label.setMinimumWidth(420)
                self.parameter_form.addRow("", help_label)
            signal = (widget.currentTextChanged if isinstance(widget, QComboBox)
                      else widget.valueChanged)
            signal.connect(lambda value, name=parameter.name: self._on_value(name, value))
        self.parameter_box.setVisible(bool(spec.parameters))
        self._show_notes()
        # Blocks only make sense for methods that take several attributes at once.
        self.blocks_box.setHidden(spec.scope != "multivariate")
        self.dp_box.setHidden(not spec.guarantee.accepts_noise)  # after k-anonymity only
        self._show_guarantee()
        self._show_forecast()

    def _show_notes(self) -> None:
        self.carry_note.setText("\n".join(self.state.notes))
        self.carry_note.setVisible(bool(self.state.notes))

    def _show_guarantee(self) -> None:
        spec = get_method(self.state.method)
        self.guarantee_label.setText(guarantee_text(spec, self.state.values))

    def _show_forecast(self) -> None:
        self.forecast.setText("\n".join(f"• {line}" for line in self.forecast_lines()))

    def _on_value(self, name: str, value: Any) -> None:
        self.state.set_value(name, value)
        self._show_notes()
        self._show_guarantee()
        self.changed.emit()
