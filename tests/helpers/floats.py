"""Comparing floats from two computations with a tolerance that fits what was computed (issue 37).

Two correct computations of the same number agree only to the rounding of their dtype, and a sum's rounding grows
with its length and with the size of its terms: a float32 dot product of 16 terms computed by two BLAS kernels (which
kernel a CPU gets differs between machines) can differ in its last 4 bits. `np.allclose`'s defaults (rtol 1e-5,
atol 1e-8) are float64-sized and fail on such sums. The bound used here is the standard one for a sum of `terms`
terms (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1): |error| ≤ terms · eps · Σ|term|, with
`scale` standing for Σ|term| (by default the larger of |actual| and |expected|, for a value that is not a sum).
"""

from __future__ import annotations

import numpy as np
import polars as pl


def float_tolerance(dtype: np.dtype | type, terms: int = 1, scale: float | np.ndarray = 1.0) -> np.ndarray:
    """The absolute tolerance for `dtype` results of sums of `terms` terms whose absolute values add up to
    `scale`: a small safety factor of 4 on the worst-case bound's usual size, never below one ulp of `scale`."""
    eps = np.finfo(np.dtype(dtype)).eps
    return 4.0 * max(int(terms), 1) * eps * np.maximum(np.abs(scale), np.finfo(np.dtype(dtype)).tiny)


def assert_floats_close(
    actual: np.ndarray | float,
    expected: np.ndarray | float,
    *,
    dtype: np.dtype | type | None = None,
    terms: int = 1,
    scale: float | np.ndarray | None = None,
    equal_nan: bool = False,
    what: str = "",
) -> None:
    """Assert that `actual` equals `expected` up to the rounding of `dtype` (default: the coarser of the two
    arrays' float dtypes) over `terms` summed terms of total size `scale`. The comparison is done in float64, and a
    failure names the worst element, both values, the difference and the tolerance."""
    a, e = np.asarray(actual), np.asarray(expected)
    if dtype is None:
        kinds = [x.dtype for x in (a, e) if np.issubdtype(x.dtype, np.floating)]
        dtype = max(kinds, key=lambda d: np.finfo(d).eps) if kinds else np.float64
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    assert a64.shape == e64.shape, f"{what} shapes differ: {a64.shape} against {e64.shape}"
    size = np.maximum(np.abs(a64), np.abs(e64)) if scale is None else np.asarray(scale, dtype=np.float64)
    tol = float_tolerance(dtype, terms, size)
    nan = np.isnan(a64) | np.isnan(e64)
    if equal_nan:
        assert np.array_equal(np.isnan(a64), np.isnan(e64)), f"{what} NaNs in different places"
    else:
        assert not nan.any(), f"{what} NaN where a number was expected"
    diff = np.where(nan, 0.0, np.abs(a64 - e64))
    bad = diff > tol
    if bad.any():
        worst = np.unravel_index(int(np.argmax(np.where(bad, diff - tol, -np.inf))), diff.shape) if diff.ndim else ()
        i = tuple(int(k) for k in worst)
        raise AssertionError(
            f"{what} {int(bad.sum())} of {bad.size} values differ beyond {np.dtype(dtype).name} rounding over "
            f"{terms} terms: at {i} {a64[i]!r} against {e64[i]!r} (difference {diff[i]:.3g}, tolerance "
            f"{np.broadcast_to(tol, diff.shape)[i]:.3g})"
        )


def assert_frames_close(
    actual: pl.DataFrame, expected: pl.DataFrame, *, terms: int = 1, row_scale: tuple[str, ...] = (), what: str = ""
) -> None:
    """Two tables computed two ways: the same columns in the same order, every non-float column equal, every float
    column equal up to float64 rounding over `terms` summed terms (the longest sum behind a value, e.g. the number
    of images a mean or an interval is computed over). `row_scale`: columns whose largest absolute value in a row is
    the size of the terms behind every float of that row (an interval end computed as a difference, such as a
    bias-adjusted bound near 0, carries the rounding of its estimate's size, not of its own)."""
    assert actual.columns == expected.columns, f"{what} columns {actual.columns} against {expected.columns}"
    assert actual.height == expected.height, f"{what} {actual.height} rows against {expected.height}"
    size = None
    if row_scale:
        size = np.nanmax(
            np.abs(np.column_stack([expected[c].cast(pl.Float64).fill_null(0.0).to_numpy() for c in row_scale])), axis=1
        )
    for name in actual.columns:
        a, e = actual[name], expected[name]
        if a.dtype.is_float() or e.dtype.is_float():
            assert a.is_null().equals(e.is_null()), f"{what} column {name}: empty cells in different rows"
            keep = ~a.is_null()
            scale = None
            if size is not None:
                both = np.maximum(np.abs(a.fill_null(0.0).to_numpy()), np.abs(e.fill_null(0.0).to_numpy()))
                scale = np.maximum(size, both)[keep.to_numpy()]
            assert_floats_close(
                a.filter(keep).to_numpy(),
                e.filter(keep).to_numpy(),
                dtype=np.float64,
                terms=terms,
                scale=scale,
                equal_nan=True,
                what=f"{what} column {name}:",
            )
        else:
            assert a.equals(e), f"{what} column {name} differs"
