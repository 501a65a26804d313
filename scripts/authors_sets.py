"""Rule authors_sets: the release's experiment sets of Tables 1 and 3, mapped from file names to videos and frames."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.fetch import fetch
from squidflow.judgments.ingest import read_release
from squidflow.training.authors_sets import (
    authors_sets,
    experiment_file_sources,
    leak_sentence,
    leaks,
    read_experiment_files,
)

cache = snakemake.params.cache_dir
files = read_experiment_files(
    {name: fetch(src, cache) for name, src in experiment_file_sources(snakemake.params.experiments).items()}
)
judgments, _ = read_release(fetch(snakemake.params.judgments_csv, cache))
sets, notes = authors_sets(files, judgments, fetch(snakemake.params.dataset_csv, cache))
io.write_parquet(sets, snakemake.output[0], schemas.AUTHORS_SETS)
for note in notes:
    log.info("%s", note)
for rec in leaks(sets).iter_rows(named=True):
    log.warning("LEAK check, %s (training.sets: clean draws leak-free sets)", leak_sentence(rec))
