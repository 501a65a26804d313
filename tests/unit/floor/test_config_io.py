"""Config validation errors name the key; artifacts are written atomically and checked on read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml

from squidflow.config.validation import ConfigError, load_config, validate_config
from squidflow.contracts import schemas
from squidflow.contracts.io import SchemaError, atomic_path, read_parquet, write_parquet

ROOT = Path(__file__).resolve().parents[3]

SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


def test_default_config_is_valid_and_gets_defaults(root: Path) -> None:
    config = load_config(root / "config" / "config.yaml")
    assert config["gpu"]["lock_dir"] == ".snakemake/gpu-slots"
    assert 4 <= len(config["demo"]["events"]) <= 6


@pytest.mark.parametrize(
    ("config", "names"),
    [
        ({"demo": {"videos_per_event": -1}}, ["demo.videos_per_event", "-1", ">= 1"]),
        ({"demo": {"events": ["a", "b"]}}, ["demo.events", "at least 4"]),
        ({"demo": {"videoz_per_event": 2}}, ["demo.videoz_per_event", "videos_per_event"]),
        ({"stagez": []}, ["stagez", "stages"]),
        ({"stages": ["videos", "nope"]}, ["stages[1]", "nope", "one of"]),
    ],
)
def test_invalid_config_names_key_value_and_what_is_allowed(config: dict, names: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    for n in names:
        assert n in str(err.value)


@pytest.mark.parametrize(
    ("config", "names"),
    [
        ({"evaluation": {"intervals": {"level": 0.9}}}, ["evaluation.intervals", "moved to 'intervals'", "0.4.0"]),
        (
            {"training": {"classification": {"variants": ["SD"]}}},
            ["training.classification.variants", "'training.classification.methods'"],
        ),
        ({"stages": ["videos", "tables"]}, ["stages[1]", "'tables'", "renamed to 'training'", "Migration from 0.3"]),
        ({"training": {"runs_per_job": "run"}}, ["training.runs_per_job", "'run' was dropped", "Use 'seeds'"]),
    ],
)
def test_a_key_of_0_3_stops_the_run_naming_its_new_name(config: dict, names: list[str]) -> None:
    """A 0.3 config is refused like any unknown key, but the message says what the key is called now."""
    with pytest.raises(ConfigError) as err:
        validate_config(config, SCHEMA)
    for n in names:
        assert n in str(err.value)


def test_intervals_is_a_section_of_its_own_and_evaluation_bins_its_own_binary_ece() -> None:
    config = validate_config({"intervals": {"level": 0.9}, "stages": ["training"]}, SCHEMA)
    assert config["intervals"]["level"] == 0.9 and "intervals" not in config["evaluation"]
    assert config["evaluation"]["binary_ece_bins"] == 10


def test_numeric_strings_from_the_command_line_are_numbers() -> None:
    config = {"demo": {"videos_per_event": "2"}}
    validate_config(config, SCHEMA)
    assert config["demo"]["videos_per_event"] == 2


def test_every_config_file_is_valid(root: Path) -> None:
    # schema only: the paper configs name local data the user supplies (data/standard); test_faults checks paths
    for path in sorted((root / "config").glob("*.yaml")):
        load_config(path, check_paths=False)


def test_every_config_key_is_documented(root: Path) -> None:
    """config/README.md names every key of the schema (dotted), so no option is a secret."""
    doc = (root / "config" / "README.md").read_text()
    schema = yaml.safe_load(SCHEMA.read_text())

    def keys(node: dict, prefix: str = "") -> list[str]:
        out = []
        for name, sub in (node.get("properties") or {}).items():
            dotted = f"{prefix}{name}"
            out.append(dotted)
            out += keys(sub, dotted + ".")
        return out

    def documented(key: str) -> bool:
        name = key.split(".")[-1]
        return f"`{name}`" in doc or f"## {name}" in doc

    missing = [k for k in keys(schema) if not documented(k)]
    assert not missing, f"undocumented config keys in config/README.md: {missing}"


RATINGS = schemas.Schema(
    "ratings", {"video_id": pl.Utf8, "rating": pl.Int64, "note": pl.Utf8}, produced_by="rule rate", optional=("note",)
)


def test_write_is_atomic_and_read_checks_schema(tmp_path: Path) -> None:
    out = tmp_path / "a" / "ratings.parquet"
    df = pl.DataFrame({"video_id": ["v"], "rating": [55.0]})
    written = write_parquet(df, out, RATINGS)
    assert written.schema == {"video_id": pl.Utf8, "rating": pl.Int64, "note": pl.Utf8}  # cast, optional filled
    assert read_parquet(out, RATINGS)["rating"].to_list() == [55]
    assert [p.name for p in out.parent.iterdir()] == ["ratings.parquet"]  # no temp files left
    df.drop("rating").write_parquet(out)
    with pytest.raises(SchemaError, match=r"ratings.parquet.*'rating' is missing.*rule rate"):
        read_parquet(out, RATINGS)


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "x.csv"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_write_rejects_missing_required_column(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="missing required column"):
        write_parquet(pl.DataFrame({"video_id": ["v"]}), tmp_path / "f.parquet", schemas.FRAMES)


def test_feature_vectors_of_any_width(tmp_path: Path) -> None:
    df = pl.DataFrame(
        {
            "video_id": ["v", "v"],
            "frame_index": [0, 1],
            "pts_s": [0.0, 0.04],
            "feature": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
        }
    )
    write_parquet(df, tmp_path / "f.parquet", schemas.FEATURES)
    back = read_parquet(tmp_path / "f.parquet", schemas.FEATURES)
    assert back.schema["feature"] == pl.Array(pl.Float32, 3)


def test_boolean_strings_from_the_command_line_are_booleans() -> None:
    config = {"retry_failed": "true"}
    validate_config(config, SCHEMA)
    assert config["retry_failed"] is True


@pytest.mark.parametrize("path", sorted((ROOT / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_defaults_are_filled_exactly_as_snakemake_fills_them(path) -> None:
    """`fill_defaults` replaces Snakemake's `validate(..., set_default=True)` (which re-reads the schema file on every
    job start-up): on every shipped config, and on an empty one, the filled config is the same."""
    import copy

    from snakemake.utils import validate

    from squidflow.config.validation import SCHEMA_PATH, fill_defaults, load_schema, load_yaml

    schema = load_schema(SCHEMA_PATH)
    for config in (load_yaml(path) or {}, {}):
        ours, snakemakes = copy.deepcopy(config), copy.deepcopy(config)
        validate(snakemakes, str(SCHEMA_PATH), set_default=True)
        assert fill_defaults(ours, schema) == snakemakes
    assert set(ours) >= {"stages", "frames", "training"}  # the empty config got every section's defaults


@pytest.mark.parametrize("n", [0, 1, 5, 23])
def test_write_parquet_sorted_writes_the_sorted_frame_a_block_at_a_time(tmp_path, n):
    """gather_features writes the features in (video_id, frame_index) order a block of rows at a time (issue 61: a
    sort of 80,000 frames' features took 2.5 GB): what it writes is the sorted, conformed frame, blocks of any size,
    an empty frame included."""
    from squidflow.contracts import io

    rng = np.random.default_rng(n)
    df = pl.DataFrame(
        {
            "video_id": [f"v{int(i) % 4}" for i in rng.integers(0, 100, n)],
            "frame_index": rng.permutation(n).astype(np.int64),
            "pts_s": rng.random(n),
            "feature": pl.Series(rng.random((n, 3)).astype(np.float32), dtype=pl.Array(pl.Float32, 3)),
        }
    )
    out = tmp_path / "features.parquet"
    io.write_parquet_sorted(df, out, schemas.FEATURES, ["video_id", "frame_index"], block_rows=4)
    got = io.read_parquet(out, schemas.FEATURES)
    assert got.equals(io.conform(df, schemas.FEATURES).sort("video_id", "frame_index"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["features.parquet"]  # written atomically: no temporary left
