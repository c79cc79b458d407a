"""Synthetic microdata for benchmarks and for the sample bundled with the application.

``python benchmarks/synthetic.py`` rewrites ``resources/sample_survey.csv``: 600 made-up
survey records (no real person) with an identifier, a region, five numeric
quasi-identifiers with realistic correlations and two confidential attributes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

REGIONS = ("North", "South", "East", "West", "Centre")
DIAGNOSES = ("none", "asthma", "diabetes", "hypertension", "depression")


def numeric_records(n: int, d: int, *, random_state: int = 0) -> np.ndarray:
    """``n`` × ``d`` correlated, skewed numeric data (a latent factor plus noise)."""
    rng = np.random.default_rng(random_state)
    latent = rng.normal(size=(n, 1))
    loadings = rng.uniform(0.3, 0.9, size=(1, d))
    X = latent * loadings + rng.normal(scale=0.6, size=(n, d))
    X[:, ::2] = np.exp(X[:, ::2] / 2)  # income-like skew on every other attribute
    return X


def sample_survey(n: int = 600, *, random_state: int = 2026) -> pd.DataFrame:
    rng = np.random.default_rng(random_state)
    age = rng.integers(18, 90, size=n)
    years_education = np.clip(np.round(rng.normal(13, 3, size=n)), 0, 25).astype(int)
    income = np.round(np.exp(rng.normal(10.1, 0.5, size=n)
                             + 0.03 * (years_education - 13)
                             + 0.004 * np.minimum(age, 60)), -2).astype(int)
    hours_worked = np.clip(np.round(rng.normal(38, 9, size=n) - 0.4 * np.maximum(age - 60, 0)),
                           0, 80).astype(int)
    household_size = 1 + rng.poisson(1.6, size=n)
    health_spending = np.round(200 + 12 * age + rng.gamma(2.0, 300, size=n), 2)
    diagnosis = rng.choice(DIAGNOSES, size=n, p=(0.55, 0.12, 0.1, 0.15, 0.08))
    return pd.DataFrame({
        "person_id": [f"P{100000 + i}" for i in range(n)],
        "region": rng.choice(REGIONS, size=n),
        "age": age,
        "years_education": years_education,
        "income": income,
        "hours_worked": hours_worked,
        "household_size": household_size,
        "health_spending": health_spending,
        "diagnosis": diagnosis,
    })


if __name__ == "__main__":
    target = Path(__file__).resolve().parent.parent / "resources" / "sample_survey.csv"
    sample_survey().to_csv(target, index=False)
    print(f"wrote {target}")
