"""Rule comparison_hits: the Likert task (CSV, one row per set) and its HTML page with the region drawn."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

import os

from squidflow.comparison.sets import hits_html, hits_table
from squidflow.contracts import io, schemas

corpus = io.read_parquet(snakemake.input.corpus, schemas.COMPARISON_CORPUS)
hits = hits_table(io.read_parquet(snakemake.input.sets, schemas.COMPARISON_SETS), corpus)
io.write_csv(hits, snakemake.output.csv)  # neutralised: inferences are internet text opened in spreadsheets
page = hits_html(hits, max_hits=snakemake.params.html_max_hits, html_dir=os.path.dirname(snakemake.output.html))
io.write_text(snakemake.output.html, page)
