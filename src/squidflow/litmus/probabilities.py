"""Any guesser's first-turn probabilities, from a file (litmus test §4: LXMERT and GDSE were evaluated this way).

The litmus metrics need only what a guesser outputs after the first QA pair: a probability for each candidate
object. A model squidflow does not train is measured from a file with one row per (game, candidate):

    game_id,object_id,probability
    2418,1234,0.61
    2418,1240,0.39

as CSV, Parquet or JSON Lines (chosen by the file name: .csv, .parquet, .jsonl / .json), a local path or a URL.
`game_id` is the GuessWhat?! game id, `object_id` the candidate's id in that game, `probability` the model's
probability after the game's first turn. Each game's probabilities sum to 1 (within 0.01); a game with probabilities
must list every candidate; games without any are left out of the metrics (the log says how many).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from squidflow.errors import UserError

SUM_TOLERANCE = 0.01
COLUMNS = {"game_id": pl.Int64, "object_id": pl.Int64, "probability": pl.Float64}


class ProbabilityFileError(UserError, ValueError):
    """A guesser's probability file breaks the documented format; the message names the file, the row and the fix."""


def _read(path: Path, name: str) -> pl.DataFrame:
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if ".parquet" in suffixes:
            return pl.read_parquet(path)
        if ".csv" in suffixes:
            return pl.read_csv(path, infer_schema=False)
        if ".jsonl" in suffixes or ".json" in suffixes or ".ndjson" in suffixes:
            return pl.read_ndjson(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise ProbabilityFileError(f"{name}: cannot be read ({exc}); see config/README.md (litmus.models)") from exc
    raise ProbabilityFileError(f"{name}: unknown format; name the file .csv, .parquet or .jsonl")


def _typed_rows(raw: pl.DataFrame, name: str) -> pl.DataFrame:
    """The file's columns cast to their types, each row numbered (`_row`), every probability in [0, 1] and every
    (game, object) once; the first bad row raises ProbabilityFileError."""
    missing = [c for c in COLUMNS if c not in raw.columns]
    if missing:
        raise ProbabilityFileError(
            f"{name}: missing column(s) {missing} (has {raw.columns}); the file needs "
            f"{list(COLUMNS)}, one row per (game, candidate object)"
        )
    df = raw.select(list(COLUMNS)).with_row_index("_row", offset=1)
    for col, dtype in COLUMNS.items():
        cast = (
            df[col].cast(pl.Utf8).str.strip_chars().cast(dtype, strict=False)
            if df[col].dtype == pl.Utf8
            else df[col].cast(dtype, strict=False)
        )
        bad = df.filter(cast.is_null())
        if bad.height:
            row = bad.row(0, named=True)
            raise ProbabilityFileError(
                f"{name}, row {row['_row']}: column '{col}' = {row[col]!r} is not a "
                f"{'number' if col == 'probability' else 'integer id'}; fix the row"
            )
        df = df.with_columns(cast.alias(col))
    out_of_range = df.filter((pl.col("probability") < 0) | (pl.col("probability") > 1) | pl.col("probability").is_nan())
    if out_of_range.height:
        row = out_of_range.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: probability {row['probability']} is outside [0, 1]; "
            "write probabilities (after the softmax), not scores"
        )
    dup = df.filter(pl.struct("game_id", "object_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: game {row['game_id']} object {row['object_id']} "
            "appears twice; keep one row per (game, object)"
        )
    return df


def _check_games(df: pl.DataFrame, games: pl.DataFrame, name: str) -> None:
    """Every row is a candidate object of a configured game, and every game lists all its candidates with
    probabilities that sum to 1."""
    candidates = games.select(
        "game_id", pl.col("objects").list.eval(pl.element().struct.field("object_id")).alias("_candidates")
    )
    joined = df.join(candidates, on="game_id", how="left", maintain_order="left")
    unknown_game = joined.filter(pl.col("_candidates").is_null())
    if unknown_game.height:
        row = unknown_game.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: game {row['game_id']} is not in litmus.games; give "
            "probabilities for the configured games only"
        )
    not_candidate = joined.filter(~pl.col("_candidates").list.contains(pl.col("object_id")))
    if not_candidate.height:
        row = not_candidate.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: object {row['object_id']} is not a candidate of game "
            f"{row['game_id']} (candidates: {sorted(row['_candidates'])})"
        )
    per_game = (
        joined.group_by("game_id", maintain_order=True)
        .agg(
            pl.col("_row").min(),
            pl.col("probability").sum().alias("total"),
            pl.len().alias("n"),
            pl.col("_candidates").first().list.len().alias("n_candidates"),
        )
        .sort("_row")
    )
    incomplete = per_game.filter(pl.col("n") != pl.col("n_candidates"))
    if incomplete.height:
        row = incomplete.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: game {row['game_id']} has probabilities for "
            f"{row['n']} of its {row['n_candidates']} candidates; list every candidate"
        )
    off = per_game.filter((pl.col("total") - 1).abs() > SUM_TOLERANCE)
    if off.height:
        row = off.row(0, named=True)
        raise ProbabilityFileError(
            f"{name}, row {row['_row']}: game {row['game_id']}'s probabilities sum to "
            f"{row['total']:.4f}, not 1; write each game's distribution over its candidates"
        )


def read_probabilities(path: str | Path, games: pl.DataFrame, *, model: str, name: str | None = None) -> pl.DataFrame:
    """Read a probability file and check it against the games; LITMUS_PROBABILITIES rows for `model` (seed null)."""
    name = name or str(path)
    raw = _read(Path(path), name)
    df = _typed_rows(raw, name)
    _check_games(df, games, name)
    return df.select(
        pl.lit(model).alias("model"), pl.lit(None, dtype=pl.Int64).alias("seed"), "game_id", "object_id", "probability"
    )
