"""The batch layer: many simulations at once.

What one run is (``runs``), executing prepared runs with the cache first and the rest on Dask (``execute``), the
engines that run them here or as batch jobs (``engine``), the estimate of the time left (``eta``) and progress
lines (``progress``). It builds on ``simulation`` only.
"""
