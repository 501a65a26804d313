"""Moved to the floor of the library: squidflow.intervals (the judgments, litmus and text stages use it too, and a
stage never imports a later one). This name re-exports it until every caller imports squidflow.intervals."""

from squidflow.intervals import (  # noqa: F401
    CHUNK_ELEMENTS,
    METHODS,
    IntervalConfig,
    bootstrap_p_value,
    counts,
    format_interval,
    from_counts,
    holm,
    image_resamples,
    interval,
    interval_from,
    intervals_table,
    mean_interval,
    paired_test,
    rater_resamples,
    replicates,
)
