"""The method panel, built entirely from the registry (:func:`core.methods`).

One drop-down lists every registered method; the panel shows its description and one
input per parameter, chosen from the parameter's constraint: an integer interval gives a
spin box, a real interval a decimal spin box, a set of options a drop-down. A method
added to the registry appears here with no change to the GUI.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFormLayout, QFrame, QGroupBox,
                               QLabel, QLineEdit, QScrollArea, QSpinBox, QVBoxLayout,
                               QWidget)

from core.methods.registry import get_method, methods
from core.methods.registry import Interval, Options, Parameter
from microagg_desktop.state import MethodState

__all__ = ["MethodPanel", "parameter_widget"]

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
    tip = parameter.help or ""
    widget.setToolTip(f"{tip} Allowed: {constraint.describe()}.".strip())
    widget.setMinimumWidth(120)
    return widget


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


class MethodPanel(QWidget):
    """The Method tab: method choice, its description and its parameters.

    Signals
    -------
    changed
        After the method or any parameter changed.
    """

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.state = MethodState()
        self.method_box = QComboBox(self)
        for method in methods():
            self.method_box.addItem(method.label, method.name)
        self.description = QLabel(self)
        self.description.setWordWrap(True)
        self.description.setTextFormat(Qt.TextFormat.PlainText)
        self.reference = QLabel(self)
        self.reference.setWordWrap(True)
        self.reference.setStyleSheet("color: #555;")
        self.parameter_box = QGroupBox("Parameters", self)
        self.parameter_form = QFormLayout(self.parameter_box)
        self.parameter_form.setFieldGrowthPolicy(
            QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.widgets: dict[str, QWidget] = {}

        self.method_box.setMinimumWidth(260)
        choice = QFormLayout()
        choice.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        choice.addRow("Method:", self.method_box)
        # The page scrolls rather than squeezing its groups when the window is small.
        content = QWidget(self)
        layout = QVBoxLayout(content)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        layout.addLayout(choice)
        layout.addWidget(self.description)
        layout.addWidget(self.reference)
        layout.addWidget(self.parameter_box)

        self.blocks_box = QGroupBox("Attribute blocks (optional)", self)
        blocks_form = QFormLayout(self.blocks_box)
        self.blocks_edit = QLineEdit(self.blocks_box)
        self.blocks_edit.setPlaceholderText("e.g.  age,income ; hours_worked,years_education")
        self.blocks_edit.setMinimumWidth(420)
        self.blocks_edit.textChanged.connect(lambda _: self.changed.emit())
        blocks_help = QLabel(
            "Leave empty to microaggregate all quasi-identifiers together. With blocks "
            "(columns separated by commas, blocks by semicolons), each block is "
            "microaggregated on its own: information loss is lower, but k-anonymity then "
            "holds within each block only, not for the combination.", self.blocks_box)
        blocks_help.setWordWrap(True)
        blocks_help.setStyleSheet("color: #555;")
        blocks_form.addRow("Blocks:", self.blocks_edit)
        blocks_form.addRow("", blocks_help)
        layout.addWidget(self.blocks_box)

        risk_box = QGroupBox("Disclosure-risk measures", self)
        risk_form = QFormLayout(risk_box)
        risk_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.intruder_box = QComboBox(risk_box)
        for value, text in INTRUDER_CHOICES:
            self.intruder_box.addItem(text, value)
        self.intruder_box.currentIndexChanged.connect(lambda _: self.changed.emit())
        risk_help = QLabel(
            "Record linkage (DLD) and interval disclosure (ID) are computed for each set "
            "of attributes the intruder is assumed to know; the results give each "
            "scenario and their mean.", risk_box)
        risk_help.setWordWrap(True)
        risk_help.setStyleSheet("color: #555;")
        risk_form.addRow("The intruder knows:", self.intruder_box)
        risk_form.addRow("", risk_help)
        layout.addWidget(risk_box)

        self.dp_box = QGroupBox("Differential privacy for the confidential attributes "
                                "(optional)", self)
        self.dp_box.setCheckable(True)
        self.dp_box.setChecked(False)
        dp_form = QFormLayout(self.dp_box)
        dp_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.epsilon_spin = QDoubleSpinBox(self.dp_box)
        self.epsilon_spin.setDecimals(3)
        self.epsilon_spin.setRange(0.001, 100.0)
        self.epsilon_spin.setValue(1.0)
        self.bounds_edit = QLineEdit(self.dp_box)
        self.bounds_edit.setMinimumWidth(420)
        self.bounds_edit.setPlaceholderText("e.g.  health_spending=0:5000")
        self.seed_spin = QSpinBox(self.dp_box)
        self.seed_spin.setRange(0, _INT_LIMIT)
        dp_help = QLabel(
            "After a k-anonymity method, Laplace noise of scale (HI − LO)/ε is added to "
            "every confidential attribute. Give the bounds LO:HI of each one: they are "
            "never taken from the data. The report states the stochastic t that this "
            "guarantees (Proposition 1).", self.dp_box)
        dp_help.setWordWrap(True)
        dp_help.setStyleSheet("color: #555;")
        dp_form.addRow("ε (epsilon):", self.epsilon_spin)
        dp_form.addRow("Bounds:", self.bounds_edit)
        dp_form.addRow("Seed:", self.seed_spin)
        dp_form.addRow("", dp_help)
        layout.addWidget(self.dp_box)
        layout.addStretch(1)
        self.method_box.currentIndexChanged.connect(self._on_method_chosen)
        self._show_method()

    def method_name(self) -> str:
        """Registry name of the chosen method."""
        return self.state.method

    def set_method(self, name: str) -> None:
        """Choose a method by registry name; its parameters go back to their defaults."""
        position = self.method_box.findData(get_method(name).name)
        self.method_box.setCurrentIndex(position)

    def parameters(self) -> dict[str, Any]:
        """The parameter values as entered (checked by the registry when run)."""
        return dict(self.state.values)

    def blocks(self) -> str | None:
        """The attribute blocks as typed ("A,B;C,D"), or None for one block of all."""
        if self.blocks_box.isHidden():  # the chosen method takes no blocks
            return None
        text = self.blocks_edit.text().strip()
        return text or None

    def set_blocks(self, text: str) -> None:
        self.blocks_edit.setText(text)

    def noise_options(self) -> dict[str, Any]:
        """``dp_epsilon``, ``confidential_bounds`` and ``seed`` for anonymize(), if chosen."""
        if self.dp_box.isHidden() or not self.dp_box.isChecked():
            return {}
        return {"dp_epsilon": self.epsilon_spin.value(),
                "confidential_bounds": self.bounds_edit.text().strip() or None,
                "seed": self.seed_spin.value()}

    def set_noise(self, epsilon: float, bounds: str, seed: int = 0) -> None:
        self.dp_box.setChecked(True)
        self.epsilon_spin.setValue(epsilon)
        self.bounds_edit.setText(bounds)
        self.seed_spin.setValue(seed)

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

    def _on_method_chosen(self, position: int) -> None:
        name = self.method_box.itemData(position)
        if name and name != self.state.method:
            self.state.set_method(name)
            self._show_method()
            self.changed.emit()

    def _show_method(self) -> None:
        spec = get_method(self.state.method)
        self.description.setText(spec.description)
        self.reference.setText(f"Reference: {spec.reference}" if spec.reference else "")
        self.reference.setVisible(bool(spec.reference))
        while self.parameter_form.rowCount():
            self.parameter_form.removeRow(0)
        self.widgets = {}
        for parameter in spec.parameters:
            widget = parameter_widget(parameter, self.parameter_box)
            self.widgets[parameter.name] = widget
            label = QLabel(f"{parameter.label or parameter.name}:", self.parameter_box)
            label.setToolTip(parameter.help)
            self.parameter_form.addRow(label, widget)
            if parameter.help:
                help_label = QLabel(parameter.help, self.parameter_box)
                help_label.setWordWrap(True)
                help_label.setStyleSheet("color: #555;")
                help_label.setMinimumWidth(520)
                self.parameter_form.addRow("", help_label)
            signal = (widget.currentTextChanged if isinstance(widget, QComboBox)
                      else widget.valueChanged)
            signal.connect(lambda value, name=parameter.name: self._on_value(name, value))
        self.parameter_box.setVisible(bool(spec.parameters))
        # Blocks only make sense for methods that take several attributes at once.
        self.blocks_box.setHidden(spec.scope != "multivariate")
        if hasattr(self, "dp_box"):  # noise follows k-anonymity methods only
            self.dp_box.setHidden(not spec.guarantee.accepts_noise)

    def _on_value(self, name: str, value: Any) -> None:
        self.state.set_value(name, value)
        self.changed.emit()
