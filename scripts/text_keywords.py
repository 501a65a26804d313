"""Rule text_keywords: the tf, tf·idf and random keyword baselines per frame and preprocessing setting."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.text.keywords import build_keywords

build_keywords(
    snakemake.input.cooccurring,
    snakemake.input.videos,
    snakemake.input.subtitles,
    keywords_path=snakemake.output.keywords,
    settings=snakemake.params.settings,
    top_k=snakemake.params.top_k,
    seed=snakemake.params.seed,
    default_language=snakemake.params.default_language,
)
