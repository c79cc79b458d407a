"""The data model: roles and measurement levels, the measured quasi-identifiers, aggregation.

The lowest layer of the engine (with :mod:`core.io.read`): it knows tables and columns, never
an algorithm, a measure or a verifier.
"""

from core.data.roles import Level, Role, RoleSpec

__all__ = ["Level", "Role", "RoleSpec"]
