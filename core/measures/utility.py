"""Utility of a release: IL1, the mean variation of data, covariances and correlations.

The definition is in :mod:`core.measures.measure.measure`'s notes (Nin, Mic1D-k, Section 2.3).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from core.compiled import kernel
from core.data.prepare import constant_columns

__all__ = ["information_loss_il1", "il1_mixed", "Moments", "original_moments",
           "mixed_moments"]


class Moments(NamedTuple):
    """The original's side of IL1: means, population covariance and correlation matrices."""

    mean: np.ndarray
    covariance: np.ndarray
    correlation: np.ndarray


def original_moments(raw: np.ndarray) -> Moments:
    """:class:`Moments` of ``raw`` (n_records × n_attributes), a function of it alone."""
    mean = raw.mean(axis=0)
    covariance = _covariance(raw, mean)
    return Moments(mean, covariance, _correlation(raw, covariance))


def mixed_moments(raw: np.ndarray, nominal: np.ndarray) -> Moments | None:
    """The :class:`Moments` :func:`il1_mixed` takes of ``raw`` (None: all nominal)."""
    if nominal.all():
        return None
    return original_moments(raw if not nominal.any() else raw[:, ~nominal])


def il1_mixed(raw: np.ndarray, raw_masked: np.ndarray, nominal: np.ndarray, *,
              moments: Moments | None = None) -> tuple[float, dict]:
    """IL1 with nominal attributes in the data term only (module notes).

    ``moments`` is :func:`mixed_moments` of ``raw`` and ``nominal`` when made ahead.
    """
    if not nominal.any():
        return information_loss_il1(raw, raw_masked, moments=moments)
    changed = float((raw[:, nominal] != raw_masked[:, nominal]).mean())
    share = float(nominal.mean())
    if nominal.all():
        return 100.0 * changed, {"data": changed, "covariances": 0.0, "variances": 0.0,
                                 "correlations": 0.0, "means": 0.0}
    _, components = information_loss_il1(raw[:, ~nominal], raw_masked[:, ~nominal],
                                         moments=moments)
    components["data"] = (1.0 - share) * components["data"] + share * changed
    terms = ("data", "covariances", "variances", "correlations")
    return 100.0 * sum(components[t] for t in terms) / 4, components


def information_loss_il1(raw: np.ndarray, raw_masked: np.ndarray, *,
                         moments: Moments | None = None) -> tuple[float, dict]:
    """IL1 = 100·(MV(X,X′) + MV(V,V′) + MV(S,S′) + MAE(R,R′))/4 (module notes).

    Parameters
    ----------
    raw, raw_masked : ndarray of shape (n_records, n_attributes)
    moments : Moments, optional
        :func:`original_moments` of ``raw``, when made ahead (the same figures).

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
    mean, V, R = moments if moments is not None else original_moments(raw)
    masked = original_moments(raw_masked)
    mean_masked, V_masked = masked.mean, masked.covariance
    components = {
        "data": _mean_variation(raw, raw_masked),
        "covariances": _mean_variation(V[upper], V_masked[upper]),
        "variances": _mean_variation(np.diag(V), np.diag(V_masked)),
        "correlations": float(np.mean(np.abs(R[upper] - masked.correlation[upper]))),
    }
    il1 = 100.0 * sum(components.values()) / 4
    components["means"] = _mean_variation(mean, mean_masked)
    return float(il1), components


def _mean_variation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if (_variations_compiled is not None and a.ndim == 2 and a.shape == b.shape
            and a.flags.c_contiguous and b.flags.c_contiguous):
        terms = np.empty(a.shape)  # numpy's: large pages (core.compiled)
        _variations_compiled(a, b, terms)  # the same terms in the same layout
    else:
        scale = np.maximum(np.abs(a), np.abs(b))
        terms = np.divide(np.abs(a - b), scale, out=np.zeros_like(scale), where=scale > 0)
    return float(terms.mean())


def _variations(a, b, terms):
    """``|a − b| / max(|a|, |b|)`` entry by entry into ``terms``, 0 where the maximum is
    not > 0.

    The terms of :func:`_mean_variation` in one pass (C order, as numpy makes them),
    each by the same IEEE operations: the mean of either array is the same float.
    """
    n, d = a.shape
    for i in range(n):
        for j in range(d):
            x, y = a[i, j], b[i, j]
            sx, sy = abs(x), abs(y)
            if sx != sx or sy != sy:  # numpy.maximum keeps a NaN: not > 0
                terms[i, j] = 0.0
                continue
            scale = sx if sx >= sy else sy
            terms[i, j] = abs(x - y) / scale if scale > 0 else 0.0
    return terms


_variations_compiled = kernel(_variations)


def _covariance(X: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Population covariance of ``X`` around ``mean`` (= ``X.mean(axis=0)``)."""
    centred = X - mean
    return centred.T @ centred / len(X)


def _correlation(X: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Correlation matrix of ``X`` from its covariance matrix ``V`` (module notes)."""
    sd = np.sqrt(np.diag(V))
    constant = ~(sd > 0) | constant_columns(X)  # = X.min(axis=0) == X.max(axis=0)
    sd = np.where(constant, 1.0, sd)
    R = V / np.outer(sd, sd)
    R[constant, :] = 0.0
    R[:, constant] = 0.0
    return np.clip(R, -1.0, 1.0)
