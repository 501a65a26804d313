"""Rule simulate_label_studio: the SIMULATED panel's MTurk batch results -> Label Studio JSON exports (demo)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io
from squidflow.demo.label_studio import simulated_exports
from squidflow.judgments.ingest import read_mturk_batch

batches = {
    round_: read_mturk_batch(path, source="simulated", round_=round_)[0]
    for round_, path in ((1, snakemake.input.batch), (2, snakemake.input.repeat))
}
for key, text in simulated_exports(batches, images_per_hit=snakemake.params.images_per_hit).items():
    io.write_text(snakemake.output[key], text)
    log.info("wrote %s", snakemake.output[key])
