"""Rule text_keyword_table: SemEval best/oot scores of the keyword baselines and the human upper bound, each with its
bootstrap interval over images."""

from squidflow.runtime.logs import setup

log = setup(snakemake)

from squidflow.contracts import io, schemas
from squidflow.statistics.intervals import IntervalConfig
from squidflow.text.tables import build_table

p = snakemake.params
table, md, tex = build_table(
    io.read_parquet(snakemake.input.keywords, schemas.TEXT_KEYWORDS),
    io.read_parquet(snakemake.input.gold, schemas.KEYWORD_JUDGMENTS),
    settings=p.settings,
    top_k=p.top_k,
    gold_language=p.gold_language,
    intervals=IntervalConfig.from_config(p.intervals),
    gold_name=p.gold_name,
)
io.write_csv(table, snakemake.output.csv, float_precision=4)  # keywords are internet text: formula cells neutralised
io.write_text(snakemake.output.md, md)
io.write_text(snakemake.output.tex, tex)
