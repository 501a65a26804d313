"""Rule rater_triage: each rater's signals and verdict (ok, suspect, careless) and the exclusions under the policy."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.judgments.pseudonyms import for_people
from squidflow.judgments.triage import TriageConfig, event_probabilities, exclusions, rater_triage, triage_markdown
from squidflow.statistics.intervals import IntervalConfig

p, out = snakemake.params, snakemake.output
judgments = io.read_parquet(snakemake.input.judgments, schemas.JUDGMENTS)
report = io.read_parquet(snakemake.input.report, schemas.ANNOTATOR_REPORT)
predictions = snakemake.input.get("predictions")
probability = None
if predictions:
    probability = event_probabilities(
        io.read_parquet(predictions, schemas.PREDICTIONS), judgments, p.events, p.events_config
    )
triage = rater_triage(
    judgments,
    report,
    TriageConfig.from_config(p.triage),
    policy=p.exclude,
    intervals=IntervalConfig.from_config(p.intervals),
    crowd=p.crowd,
    probability=probability,
    no_model_reason="no model probabilities configured (judgments.triage.predictions is empty)",
)
source = ",".join(sorted(judgments["source"].unique().to_list())) or "none"
log.info("verdicts: %s", dict(triage.group_by("verdict").len().iter_rows()))
io.write_parquet(triage, out.triage, schemas.RATER_TRIAGE)
io.write_parquet(exclusions(triage, report), out.exclusions, schemas.ANNOTATOR_REPORT)
shown = for_people(triage)  # results/tables/: raters by pseudonym; the ids stay in results/judgments/
io.write_csv(
    shown.with_columns(*[shown[c].list.join("; ") for c in ("rubric_flags", "reasons", "skipped", "rounds")]),
    out.csv,
    float_precision=4,
)
io.write_text(out.md, triage_markdown(triage, policy=p.exclude, source=source))
