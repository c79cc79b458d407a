"""The algorithms, their contract and the registry the CLI and the GUI are built from.

Each family is a module (``mdav``, ``heuristics``, ``gsms``, ``vmdav``, ``univariate``,
``projection``, ``refine``, ``mic1d``, ``tcloseness``, ``bucket``) working on the
measured quasi-identifiers ``X``; :mod:`core.methods.pool` is the shared record pool;
:mod:`core.methods.contract` declares what an entry promises; :mod:`core.methods.builtin`
lists the built-in entries and :mod:`core.methods.registry` publishes them.
"""

from core.methods.registry import DEFAULT_METHOD, get_method, methods, register

__all__ = ["DEFAULT_METHOD", "get_method", "methods", "register"]
