"""Blocked microaggregation on Dask, for files beyond one machine."""
