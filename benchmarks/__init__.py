"""The benchmarks: each figure a ratio against a baseline or a peer measured in the same run. Run one as a module from
the repository root, `.venv/bin/python -m benchmarks.scale` (`make bench` runs them all), so that it reaches the
installed library, the other benchmarks (`benchmarks.startup`) and the test helpers it shares (`tests.helpers`)."""
