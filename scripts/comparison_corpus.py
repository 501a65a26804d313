"""Rule comparison_corpus: the (image, region, clue, inference) corpus of the comparison sets."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.comparison.corpus import build_corpus
from squidflow.contracts import io, schemas
from squidflow.contracts.paths import DOWNLOADS_DIR
from squidflow.fetch import fetch

p = snakemake.params
kw = {}
if p.corpus == "sherlock":
    kw["annotations"] = fetch(p.annotations, DOWNLOADS_DIR)
    kw["split"] = p.split
else:
    kw["frames"] = io.read_parquet(snakemake.input.frames, schemas.FRAMES)
    kw["videos"] = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
    kw["max_sentences"] = p.max_sentences
corpus = build_corpus(p.corpus, **kw)
log.info("corpus: %d instances over %d images", len(corpus), corpus["image_id"].n_unique())
io.write_parquet(corpus, snakemake.output[0], schemas.COMPARISON_CORPUS)
