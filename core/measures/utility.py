"""Utility of a release: IL1, the mean variation of data, covariances and correlations.

The definition is in :mod:`core.measures.measure.measure`'s notes (Nin, Mic1D-k, Section 2.3).
"""

from __future__ import annotations


import numpy as np


__all__ = ["information_loss_il1", "il1_mixed"]


def il1_mixed(raw: np.ndarray, raw_masked: np.ndarray,
               nominal: np.ndarray) -> tuple[float, dict]:
    """IL1 with nominal attributes in the data term only (module notes)."""
    if not nominal.any():
        return information_loss_il1(raw, raw_masked)
    changed = float((raw[:, nominal] != raw_masked[:, nominal]).mean())
    share = float(nominal.mean())
    if nominal.all():
        return 100.0 * changed, {"data": changed, "covariances": 0.0, "variances": 0.0,
                                 "correlations": 0.0, "means": 0.0}
    _, components = information_loss_il1(raw[:, ~nominal], raw_masked[:, ~nominal])
    components["data"] = (1.0 - share) * components["data"] + share * changed
    terms = ("data", "covariances", "variances", "correlations")
    return 100.0 * sum(components[t] for t in terms) / 4, components


def information_loss_il1(raw: np.ndarray, raw_masked: np.ndarray) -> tuple[float, dict]:
    """IL1 = 100·(MV(X,X′) + MV(V,V′) + MV(S,S′) + MAE(R,R′))/4 (module notes).

    Parameters
    ----------
    raw, raw_masked : ndarray of shape (n_records, n_attributes)

    Returns
    -------
    il1 : float
        Percent.
    components : dict
        The four averaged terms (fractions) and the reported-only ``means`` term.

    Examples
    --------
    >>> X = np.array([[1.0], [3.0]])
    >>> information_loss_il1(X, X)[0]
    0.0
    """
    upper = np.triu_indices(raw.shape[1])
    V, V_masked = _covariance(raw), _covariance(raw_masked)
    components = {
        "data": _mean_variation(raw, raw_masked),
        "covariances": _mean_variation(V[upper], V_masked[upper]),
        "variances": _mean_variation(np.diag(V), np.diag(V_masked)),
        "correlations": float(np.mean(np.abs(_correlation(raw, V)[upper]
                                             - _correlation(raw_masked, V_masked)[upper]))),
    }
    il1 = 100.0 * sum(components.values()) / 4
    components["means"] = _mean_variation(raw.mean(axis=0), raw_masked.mean(axis=0))
    return float(il1), components


def _mean_variation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = np.maximum(np.abs(a), np.abs(b))
    terms = np.divide(np.abs(a - b), scale, out=np.zeros_like(scale), where=scale > 0)
    return float(terms.mean())


def _covariance(X: np.ndarray) -> np.ndarray:
    centred = X - X.mean(axis=0)
    return centred.T @ centred / len(X)


def _correlation(X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Correlation matrix of ``X`` from its covariance matrix ``V`` (module notes)."""
    sd = np.sqrt(np.diag(V))
    constant = ~(sd > 0) | (X.min(axis=0) == X.max(axis=0))
    sd = np.where(constant, 1.0, sd)
    R = V / np.outer(sd, sd)
    R[constant, :] = 0.0
    R[:, constant] = 0.0
    return np.clip(R, -1.0, 1.0)
