"""Rule method_record: results/publish/methods/<n>.json, the n-th method the run's publications use (written once;
squidflow.publish.methods)."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io
from squidflow.publish.methods import record_text

p = snakemake.params
io.write_text(snakemake.output[0], record_text(p.method, p.n))
log.info("method %d recorded: %s", p.n, snakemake.output[0])
