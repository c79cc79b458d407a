"""One sentence per measure: what it means for the person deciding on a release.

Shared by the HTML/PDF report and the results panel's tooltips, so both say the same.
"""

from __future__ import annotations

__all__ = ["MEASURE_MEANINGS", "meaning"]

MEASURE_MEANINGS: dict[str, str] = {
    "il": "Information loss: the share of the quasi-identifiers' variation (z-scored) "
          "removed by grouping; 0 % keeps everything, 100 % keeps nothing.",
    "sse": "Within-group sum of squares of the z-scored quasi-identifiers (SSE) over "
           "their total sum of squares (SST); IL is 100·SSE/SST.",
    "il1": "The paper's information loss: mean relative change of the data, covariances, "
           "variances and correlations of the quasi-identifiers (0 % = unchanged).",
    "k_prime": "Real anonymity k′: records per distinct released quasi-identifier "
               "combination, on average; higher is safer.",
    "dld": "Distance-based record linkage: the share of records an intruder who knows "
           "the original values links to their released record; lower is safer.",
    "id": "Interval disclosure: the share of values whose original lies within a narrow "
          "rank interval around the released value; lower is safer.",
    "dr": "Disclosure risk DR = 0.5·DLD + 0.5·ID; lower is safer.",
    "score": "Score = 0.5·IL1 + 0.5·DR, balancing utility and risk; lower is better.",
    "emd": "Largest earth mover's distance between a class's distribution of the "
           "confidential attribute and the whole table's: the t the release reaches.",
    "risk": "Per-record risk = 1 / size of the record's class: the chance of picking "
            "the right record among those that look the same.",
    "groups": "Number of groups the method formed.",
    "records": "Number of records released.",
    "sizes": "Smallest, mean and largest group size; the smallest must be at least k.",
    "classes": "Classes of the released table: records with the same released "
               "quasi-identifier values (and stratum), all an intruder can tell apart. "
               "Groups that released the same values make one class, so there can be "
               "fewer classes than groups, and larger ones.",
    "unique": "Records alone in their class, recognisable by their quasi-identifiers.",
}


def meaning(key: str) -> str:
    """The sentence for measure ``key`` ("" for an unknown key)."""
    return MEASURE_MEANINGS.get(key, "")
