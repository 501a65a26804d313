"""Rule text_keyword_table: SemEval best/oot scores of the keyword baselines and the human upper bound, each with its
bootstrap interval over images."""

from squidflow.logs import setup

log = setup(snakemake)

from squidflow.intervals import IntervalConfig
from squidflow.text.tables import build_table

build_table(
    snakemake.input.keywords,
    snakemake.input.gold,
    csv_path=snakemake.output.csv,
    md_path=snakemake.output.md,
    tex_path=snakemake.output.tex,
    settings=snakemake.params.settings,
    top_k=snakemake.params.top_k,
    gold_language=snakemake.params.gold_language,
    intervals=IntervalConfig.from_config(snakemake.params.intervals),
)
