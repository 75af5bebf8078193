"""Experiments: resumable sweeps (local or on Dask) and, per source paper, its points, figures and the
checks of its claims."""
