"""Rule litmus_tables: Table 2 (accuracy, Pearson's r, complement-set probability) and Table 3 (well-grounded)."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.litmus.tables import litmus_tables, write_table

metrics = io.read_parquet(snakemake.input[0], schemas.LITMUS_METRICS)
correlation, grounding = litmus_tables(metrics, snakemake.params.models)
out, note = snakemake.output, snakemake.params.note
write_table(correlation, out.correlation_csv, out.correlation_md, note=note,
            title="Table 2 (GuessWhat?! litmus test §5.2): task accuracy (%), Pearson's r with the rule soft labels, "
            "mean ± std probability of the complement set, on first turns")
write_table(grounding, out.grounding_csv, out.grounding_md, note=note,
            title="Table 3 (GuessWhat?! litmus test §5.2): % of QA pairs well-grounded against the reference set "
            "(every RS object > τ) and the complement set (every CS object < τ)")
