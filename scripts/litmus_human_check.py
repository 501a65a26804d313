"""Rule litmus_human_check: human soft labels from reference-set annotations against the rule soft labels."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.fetch import fetch
from squidflow.litmus.human import read_annotations, sample_check
from squidflow.litmus.tables import markdown
from squidflow.statistics.intervals import IntervalConfig

games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
source = snakemake.params.annotations
annotations = read_annotations(fetch(source, snakemake.params.cache_dir), games, name=source)
table = sample_check(
    annotations,
    games,
    soft_labels,
    snakemake.params.normalisation,
    IntervalConfig.from_config(snakemake.params.intervals),
)
io.write_csv(table, snakemake.output.csv)
io.write_text(
    snakemake.output.md,
    markdown(
        table,
        note=snakemake.params.note,
        title=(
            "Human sample check: agreement and Pearson's r between human and rule soft labels (§3.1, §5.1) "
            "[bootstrap interval over QA pairs, each with its annotators]"
        ),
    ),
)
