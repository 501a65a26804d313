# Stage: comparison sets (Sherlock (Hessel et al., 2022) §4.3, Appendix E).
# corpus (Sherlock annotations | our frames + their videos' text) -> SBERT embeddings -> plausibility scorer
# (text | probe | clip) -> pool (soft + hard dedup) -> greedy diverse sets, ranked -> Likert HITs; scorer metrics.


include: "inputs/comparison.smk"


rule comparison_corpus:
    input:
        unpack(get_comparison_corpus_inputs),
    output:
        COMPARISON_CORPUS_TABLE,
    log:
        "logs/comparison_corpus/corpus.log",
    conda:
        "../../envs/text.yaml"
    params:
        corpus=COMPARISON["corpus"],
        annotations=get_sherlock_annotations(),
        split=config["sherlock"]["split"],
        max_sentences=COMPARISON["max_sentences"],
    script:
        "../../scripts/comparison_corpus.py"


rule comparison_sbert:
    input:
        COMPARISON_CORPUS_TABLE,
    output:
        COMPARISON_SBERT_TABLE,
    log:
        "logs/comparison_sbert/sbert.log",
    benchmark:
        "results/benchmarks/comparison_sbert/sbert.tsv"
    conda:
        "../../envs/text.yaml"
    threads: 2
    params:
        cache="results/comparison/cache/sbert.parquet",
    script:
        "../../scripts/comparison_sbert.py"


rule comparison_embed:
    input:
        unpack(get_comparison_embed_inputs),
    output:
        COMPARISON_EMBEDDINGS_TABLE,
    log:
        "logs/comparison_embed/embed.log",
    benchmark:
        "results/benchmarks/comparison_embed/embed.tsv"
    conda:
        "../../envs/text.yaml"
    threads: 2
    resources:
        gpu=1 if COMPARISON["scorer"] == "clip" else 0,
    params:
        scorer=COMPARISON["scorer"],
        probe=COMPARISON["probe"],
        clip=COMPARISON["clip"],
    script:
        "../../scripts/comparison_embed.py"


rule comparison_pool:
    input:
        corpus=COMPARISON_CORPUS_TABLE,
        sbert=COMPARISON_SBERT_TABLE,
    output:
        COMPARISON_POOL_TABLE,
    log:
        "logs/comparison_pool/pool.log",
    benchmark:
        "results/benchmarks/comparison_pool/pool.tsv"
    conda:
        "../../envs/text.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        # Sherlock's corpus (363K training inferences): the soft dedup's k-means partition runs on a GPU slot
        gpu=1 if COMPARISON["corpus"] == "sherlock" else 0,
    params:
        comparison=config_fields(ComparisonConfig, COMPARISON),
    script:
        "../../scripts/comparison_pool.py"


rule comparison_sets:
    input:
        corpus=COMPARISON_CORPUS_TABLE,
        sbert=COMPARISON_SBERT_TABLE,
        embeddings=COMPARISON_EMBEDDINGS_TABLE,
        pool=COMPARISON_POOL_TABLE,
    output:
        COMPARISON_SETS_TABLE,
    log:
        "logs/comparison_sets/sets.log",
    benchmark:
        "results/benchmarks/comparison_sets/sets.tsv"
    conda:
        "../../envs/text.yaml"
    threads: 2
    params:
        comparison=config_fields(ComparisonConfig, COMPARISON),
        on_empty=config["on_empty"],
    script:
        "../../scripts/comparison_sets.py"


rule comparison_hits:
    input:
        corpus=COMPARISON_CORPUS_TABLE,
        sets=COMPARISON_SETS_TABLE,
    output:
        csv=COMPARISON_HITS,
        html=COMPARISON_HITS_HTML,
    log:
        "logs/comparison_hits/hits.log",
    conda:
        "../../envs/text.yaml"
    params:
        html_max_hits=COMPARISON["html_max_hits"],
    script:
        "../../scripts/comparison_hits.py"


rule comparison_metrics:
    input:
        unpack(get_comparison_ratings),
        unpack(get_comparison_proposals),
        corpus=COMPARISON_CORPUS_TABLE,
        embeddings=COMPARISON_EMBEDDINGS_TABLE,
    output:
        COMPARISON_METRICS,
    log:
        "logs/comparison_metrics/metrics.log",
    conda:
        "../../envs/text.yaml"
    script:
        "../../scripts/comparison_metrics.py"


# A few sets drawn as the annotators see them, for the report (squidflow.comparison.figures).
rule comparison_sets_figure:
    input:
        unpack(get_comparison_figure_inputs),
    output:
        report(
            COMPARISON_SETS_FIGURE,
            caption="../report/comparison/sets_figure.rst",
            category="Comparison sets",
            subcategory="Sets drawn",
            labels={"result": "sets as annotators see them"},
        ),
    log:
        "logs/comparison_sets_figure/comparison_sets_figure.log",
    conda:
        "../../envs/reporting.yaml"
    params:
        n_sets=REPORT["comparison_sets"],
        cache_dir=DOWNLOADS_DIR,
        note=get_report_note("videos") if COMPARISON["corpus"] == "frames" else "",
    script:
        "../../scripts/comparison_sets_figure.py"


# The comparison sets' 1–3 ratings under crowd-kit's annotator models (majority vote, Dawid-Skene, GLAD, MACE): the
# comparison metric's oracle with each consensus (squidflow.comparison.crowd).
rule crowd_comparison:
    input:
        unpack(get_comparison_ratings),
    output:
        csv=report(
            "results/tables/crowd_comparison.csv",
            caption="../report/comparison/crowd_comparison.rst",
            category="Comparison sets",
            subcategory="Annotator models (crowd-kit)",
            labels={"result": "oracle per aggregation", "format": "csv"},
        ),
        md=report(
            "results/tables/crowd_comparison.md",
            caption="../report/comparison/crowd_comparison.rst",
            category="Comparison sets",
            subcategory="Annotator models (crowd-kit)",
            labels={"result": "oracle per aggregation", "format": "markdown"},
        ),
    log:
        "logs/crowd_comparison/crowd_comparison.log",
    conda:
        "../../envs/text.yaml"
    params:
        crowd=config["judgments"]["crowd"],
    script:
        "../../scripts/crowd_comparison.py"
