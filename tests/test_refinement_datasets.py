"""On every CASC data set and every base method: IGD ≤ TFRP2 ≤ none in SSE, all verified.

(The full grid, with Adult and k up to 30, is benchmarks/refinement_grid.py.)
"""

import pytest

from benchmarks.datasets import load
from benchmarks.refinement_grid import BASE_METHODS
from core import RoleSpec, anonymize


@pytest.mark.parametrize("dataset", ["census", "eia", "tarragona"])
@pytest.mark.parametrize("method, growth", BASE_METHODS)
def test_refinement_order_and_verification(dataset, method, growth):
    table, qi = load(dataset)
    roles = RoleSpec(quasi_identifiers=qi)
    params = {"growth": growth} if growth else {}
    for k in (3, 10):
        sse = []
        for refinement in ("none", "tfrp2", "igd"):
            result = anonymize(table, roles, method, k=k, refine=refinement, **params)
            assert result.verification.passed
            assert result.verification.smallest_class >= k
            sse.append(result.metrics.sse)
        assert sse[2] <= sse[1] + 1e-9 <= sse[0] + 2e-9, (dataset, method, growth, k, sse)
