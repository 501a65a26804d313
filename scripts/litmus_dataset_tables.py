"""Rule litmus_dataset_tables: first turns per split, question type and answer; the rules' accuracy on the target."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.litmus.tables import dataset_tables, markdown
from squidflow.statistics.intervals import IntervalConfig

games = io.read_parquet(snakemake.input.games, schemas.LITMUS_GAMES)
soft_labels = io.read_parquet(snakemake.input.soft_labels, schemas.LITMUS_SOFT_LABELS)
questions, rules = dataset_tables(games, soft_labels, IntervalConfig.from_config(snakemake.params.intervals))
out, note = snakemake.output, snakemake.params.note
io.write_csv(questions, out.questions_csv)
io.write_text(
    out.questions_md,
    markdown(
        questions,
        note=note,
        title=(
            "First turns per split, question type and answer (GuessWhat?! litmus test §3.2) "
            "[bootstrap interval over the split's games]"
        ),
    ),
)
io.write_csv(rules, out.rules_csv)
io.write_text(
    out.rules_md,
    markdown(
        rules,
        note=note,
        title=(
            "Spatial rules R1-R3: share of QA pairs whose target is in the rule's reference set (Appendix A) "
            "[bootstrap interval over the split's spatial QA pairs]"
        ),
    ),
)
