"""MicroAgg Desktop: the Qt application around the :mod:`core` engine.

Modules
-------
app
    The ``microagg-desktop`` entry point.
main_window
    The main window: actions, tabs, progress and the run/export flow.
table_model
    A read-only ``QAbstractTableModel`` over a DataFrame that reads only visible cells.
state
    Plain (Qt-free) view state: column descriptions, default roles, method choice.
role_editor, method_panel, results_panel
    Thin Qt bindings of that state and of a result.
worker
    Runs an engine function off the GUI thread and reports through signals.
paths
    Finds bundled resources in a checkout, an installed copy or a frozen bundle.
"""
