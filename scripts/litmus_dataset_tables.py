"""Rule litmus_dataset_tables: first turns per split, question type and answer; the rules' accuracy on the target."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow import io, schemas
from squidflow.intervals import IntervalConfig
from squidflow.litmus.tables import dataset_tables, write_table

games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
questions, rules = dataset_tables(games, soft_labels, IntervalConfig.from_config(snakemake.params.intervals))
out, note = snakemake.output, snakemake.params.note
write_table(questions, out.questions_csv, out.questions_md, note=note,
            title="First turns per split, question type and answer (GuessWhat?! litmus test §3.2)")
write_table(rules, out.rules_csv, out.rules_md, note=note,
            title="Spatial rules R1-R3: share of QA pairs whose target is in the rule's reference set (Appendix A) "
            "[bootstrap interval over the split's spatial QA pairs]")
