"""The built-in methods, registered once at import."""

from __future__ import annotations

from core.mdav import mdav
from core.registry import K, Method, MethodInput, register

__all__: list[str] = []


def _mdav(data: MethodInput, *, state, k: int):
    return mdav(data.X, k=k, state=state)


register(Method(
    name="mdav",
    label="MDAV",
    function=_mdav,
    parameters=(K,),
    description=(
        "Maximum Distance to Average Vector: fixed-size groups of k records built around "
        "the records farthest from the centre. The reference heuristic for multivariate "
        "microaggregation."
    ),
    reference="Domingo-Ferrer & Torra (2005); Khomnotai et al. (2018), Section 3.1",
))
