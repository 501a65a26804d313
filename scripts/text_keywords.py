"""Rule text_keywords: the tf, tf·idf and random keyword baselines per frame and preprocessing setting."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.text.keywords import keyword_baselines
from squidflow.text.preprocess import settings_from_config

p = snakemake.params
cooc = io.read_parquet(snakemake.input.cooccurring, schemas.COOCCURRING)
videos = io.read_parquet(snakemake.input.videos, schemas.VIDEOS)
subs = io.read_parquet(snakemake.input.subtitles, schemas.SUBTITLES)
keywords = keyword_baselines(
    cooc,
    videos,
    subs,
    settings_from_config(p.settings),
    top_k=p.top_k,
    seed=p.seed,
    default_language=p.default_language,
)
io.write_parquet(keywords, snakemake.output.keywords, schemas.TEXT_KEYWORDS)
