"""Rule triage_validation: precision, recall and ROC AUC of each triage signal against the SIMULATED panel's faults."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.demo.triage_validation import seed_scores, validation_markdown, validation_table
from squidflow.judgments.triage import TriageConfig

p, out = snakemake.params, snakemake.output
triage = io.read_parquet(snakemake.input.triage, schemas.RATER_TRIAGE)
planted = io.read_parquet(snakemake.input.planted, schemas.PLANTED_FAULTS)
images = io.read_parquet(snakemake.input.images, schemas.IMAGE_TRIAGE)
table = validation_table([seed_scores(triage, planted, TriageConfig.from_config(p.triage), p.min_skill, images)])
io.write_csv(table, out.csv, float_precision=4)
kinds = ("careless", "constant", "extremes", "reversed", "prior", "swapped_images")
io.write_text(out.md, validation_markdown(table, planted={k: p.panel.get(k, 0) for k in kinds}, policy=p.exclude))
