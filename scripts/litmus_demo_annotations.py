"""Rule litmus_demo_annotations: SIMULATED human reference sets for the demo's sample check."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.demo.litmus import simulate_annotations

games = io.read_parquet(snakemake.input[0], schemas.LITMUS_GAMES)
demo = snakemake.params.demo
annotations = simulate_annotations(
    games,
    n_qa=demo["human_qa"],
    annotators=demo["annotators"],
    noise=demo["noise"],
    seed=demo["seed"],
    split=snakemake.params.split,
)
io.write_csv(annotations, snakemake.output[0])
log.info("%d SIMULATED annotations of %d QA pairs", annotations.height, annotations["qa_id"].n_unique())
