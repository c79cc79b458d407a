"""The reference data sets with the attribute conventions of shared/data/README.md."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

DATA_DIR = Path(os.environ.get("MICROAGG_SHARED_DATA",
                               Path(__file__).resolve().parent.parent.parent / "shared" / "data"))

ATTRIBUTES = {
    "census": ("AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC",
               "POTHVAL", "INTVAL", "PEARNVAL", "FICA", "WSALVAL", "ERNVAL"),
    "eia": ("UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE",
            "INDSALES", "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES"),
    "tarragona": ("FIXED.ASSETS", "CURRENT.ASSETS", "TREASURY", "UNCOMMITTED.FUNDS",
                  "PAID.UP.CAPITAL", "SHORT.TERM.DEBT", "SALES", "LABOR.COSTS",
                  "DEPRECIATION", "OPERATING.PROFIT", "FINANCIAL.OUTCOME", "GROSS.PROFIT",
                  "NET.PROFIT"),
    # Adult's numeric attributes (the others are categorical).
    "adult": ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss",
              "hours-per-week"),
}


def load(name: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table and its conventional quasi-identifiers."""
    return pd.read_csv(DATA_DIR / f"{name}.csv"), ATTRIBUTES[name]
