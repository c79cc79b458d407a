"""The method registry: one entry per algorithm, read by the API, the CLI and the GUI.

The built-in methods (:data:`core.methods.builtin.BUILTIN_METHODS`) are published by
:func:`load_builtin_methods`, explicitly, once, all or nothing; :func:`methods` and
:func:`get_method` call it. :func:`register` adds a method of one's own. Adding a
built-in method is one module with the algorithm plus one entry in
:mod:`core.methods.builtin`; the contract of an entry is :mod:`core.methods.contract`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from core.methods.builtin import BUILTIN_METHODS, DEFAULT_METHOD
from core.methods.contract import (GROWTH, K, REFINE, T, Interval, Method, MethodInput, Options,
                           Parameter)
from core.errors import MicroaggError

__all__ = [
    "Interval", "Options", "Parameter", "Method", "MethodInput", "K", "GROWTH", "T",
    "REFINE", "register", "get_method", "methods", "load_builtin_methods",
    "DEFAULT_METHOD",
]

_REGISTRY: dict[str, Method] = {}
_LOADED = False
_LOCK = threading.Lock()


def load_builtin_methods() -> None:
    """Publish the built-in methods, once. Idempotent and thread-safe.

    The entries are checked first (unique names, none already taken); then they are
    published together, so a failure never leaves a half-filled registry.
    """
    global _LOADED
    with _LOCK:
        if _LOADED:
            return
        names = [m.name for m in BUILTIN_METHODS]
        clash = sorted({n for n in names if names.count(n) > 1 or n in _REGISTRY})
        if clash:
            raise ValueError(f"built-in method names registered twice: {clash}")
        published = {m.name: m for m in BUILTIN_METHODS}
        published.update(_REGISTRY)  # methods registered before loading come after
        _REGISTRY.clear()
        _REGISTRY.update(published)
        _LOADED = True


def register(method: Method) -> Method:
    """Add a method of one's own (after the built-in ones)."""
    load_builtin_methods()
    with _LOCK:
        if method.name in _REGISTRY:
            raise ValueError(f"method {method.name!r} is already registered")
        _REGISTRY[method.name] = method
    return method


def get_method(name: str) -> Method:
    load_builtin_methods()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise MicroaggError(
            f"Unknown method '{name}'. Available: {', '.join(_REGISTRY)}."
        ) from None


def methods() -> Sequence[Method]:
    """Every registered method: the built-in ones in their declared order, then others."""
    load_builtin_methods()
    return tuple(_REGISTRY.values())
