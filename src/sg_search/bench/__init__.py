"""Benchmarks: ``sg-search bench <name>``. Each one reports rates in [0, 1] and timings.

Every benchmark takes the same options (:class:`BenchOptions`) and returns a
:class:`BenchReport`; the CLI prints its table and writes ``--json``.
"""

from sg_search.bench.harness import BenchOptions, BenchReport, available_benchmarks, run_benchmark

__all__ = ["BenchOptions", "BenchReport", "available_benchmarks", "run_benchmark"]
