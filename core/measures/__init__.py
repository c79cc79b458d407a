"""Measures of a release: disclosure risk, information loss and partition statistics."""

from core.measures.measure import Measures, ScenarioFigures, measure

__all__ = ["Measures", "ScenarioFigures", "measure"]
