"""Rule litmus_tables: Table 2 (accuracy, Pearson's r, complement-set probability) and Table 3 (well-grounded), each
number with its spread over seeds and its bootstrap interval over QA pairs."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.litmus.tables import litmus_tables, markdown

metrics = io.read_parquet(snakemake.input.metrics, schemas.LITMUS_METRICS)
intervals = io.read_parquet(snakemake.input.intervals, schemas.LITMUS_METRIC_INTERVALS)
correlation, grounding = litmus_tables(metrics, snakemake.params.models, intervals)
out, note = snakemake.output, snakemake.params.note
io.write_csv(correlation, out.correlation_csv)
io.write_text(
    out.correlation_md,
    markdown(
        correlation,
        note=note,
        title=(
            "Table 2 (GuessWhat?! litmus test §5.2): task accuracy (%), Pearson's r with the rule soft labels, "
            "mean ± std probability of the complement set, on first turns; mean ± sd over seeds [bootstrap interval "
            "over QA pairs]"
        ),
    ),
)
io.write_csv(grounding, out.grounding_csv)
io.write_text(
    out.grounding_md,
    markdown(
        grounding,
        note=note,
        title=(
            "Table 3 (GuessWhat?! litmus test §5.2): % of QA pairs well-grounded against the reference set "
            "(every RS object > τ) and the complement set (every CS object < τ); mean ± sd over seeds [bootstrap interval "
            "over QA pairs]"
        ),
    ),
)
