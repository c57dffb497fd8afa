"""Parts of perf/compare: what its sections share, and the multi-host section."""
