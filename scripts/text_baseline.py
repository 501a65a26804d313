"""Rule text_baseline: the text-only event predictions of one method (tfidf | sbert), in the predictions format."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.text.baseline import build_baseline

if snakemake.wildcards.text_method == "sbert":
    import torch

    torch.set_num_threads(snakemake.threads)  # the cores Snakemake gave this job, no more

build_baseline(
    snakemake.input.cooccurring,
    snakemake.input.videos,
    snakemake.input.subtitles,
    snakemake.input.frames,
    predictions_path=snakemake.output.predictions,
    method=snakemake.wildcards.text_method,
    events_config=snakemake.params.events,
    setting=snakemake.params.setting,
    default_language=snakemake.params.default_language,
    seed=snakemake.params.seed,
)
