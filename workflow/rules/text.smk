# Stage: co-occurring text as a baseline ("Apples to Oranges", Mason and Charniak, NAACL 2012: tf and tf·idf keyword
# baselines, the UNT dataset's SemEval best/oot scoring). Library: squidflow.text.
# the manifest's videos -> their subtitle files (<stem>.<lang>.vtt|srt beside each video) -> per frame, its
# co-occurring text (title, description, tags, subtitles around its timestamp) -> tf / tf·idf / random keywords per
# preprocessing setting -> the keyword table against people's keywords (the keyword task, variant K:
# workflow/rules/judgments.smk); and a text-only event baseline in the predictions format, which the evaluation stage
# puts beside the image models (get_text_baseline_models in common.smk).


include: "inputs/text.smk"


rule read_subtitles:
    input:
        videos=VIDEO_MANIFEST,
        demo_subtitles=get_demo_subtitle_files,
        downloads=get_video_shard_dirs,  # the downloaded videos' subtitles, beside them
    output:
        subtitles=SUBTITLES_TABLE,
    log:
        "logs/read_subtitles/read_subtitles.log",
    conda:
        "../../envs/text.yaml"
    params:
        languages=TEXT["subtitles"]["languages"],
    script:
        "../../scripts/read_subtitles.py"


rule cooccurring_text:
    input:
        frames=FRAMES_TABLE,
        videos=VIDEO_MANIFEST,
        subtitles=SUBTITLES_TABLE,
    output:
        cooccurring=COOCCURRING_TABLE,
        report=COOCCURRING_REPORT,
    log:
        "logs/cooccurring_text/cooccurring_text.log",
    conda:
        "../../envs/text.yaml"
    params:
        window_s=TEXT["subtitles"]["window_s"],
    script:
        "../../scripts/cooccurring_text.py"


rule text_keywords:
    input:
        cooccurring=COOCCURRING_TABLE,
        videos=VIDEO_MANIFEST,
        subtitles=SUBTITLES_TABLE,
    output:
        keywords=TEXT_KEYWORDS_TABLE,
    log:
        "logs/text_keywords/text_keywords.log",
    conda:
        "../../envs/text.yaml"
    params:
        settings=TEXT["keywords"]["settings"],
        top_k=TEXT["keywords"]["top_k"],
        seed=TEXT["keywords"]["seed"],
        default_language=TEXT["default_language"],
    script:
        "../../scripts/text_keywords.py"


rule text_keyword_table:
    input:
        keywords=TEXT_KEYWORDS_TABLE,
        gold=KEYWORD_GOLD,
    output:
        csv=report(
            "results/tables/text_keywords.csv",
            category="Text baselines (Apples to Oranges)",
            subcategory="Keywords against people's keywords",
            labels={"table": "text_keywords", "format": "csv"},
            caption="../report/text/text_keywords.rst",
        ),
        md=report(
            "results/tables/text_keywords.md",
            category="Text baselines (Apples to Oranges)",
            subcategory="Keywords against people's keywords",
            labels={"table": "text_keywords", "format": "markdown"},
            caption="../report/text/text_keywords.rst",
        ),
        tex=report(
            "results/tables/text_keywords.tex",
            category="Text baselines (Apples to Oranges)",
            subcategory="Keywords against people's keywords",
            labels={"table": "text_keywords", "format": "latex"},
            caption="../report/text/text_keywords.rst",
        ),
    log:
        "logs/text_keyword_table/text_keyword_table.log",
    conda:
        "../../envs/text.yaml"
    params:
        settings=TEXT["keywords"]["settings"],
        top_k=TEXT["keywords"]["top_k"],
        gold_language=TEXT["gold"]["language"],
        source=JUDGMENT_SOURCE,
        intervals=config["intervals"],
        gold_name=lambda wildcards, input: input.gold,  # named in the message when it holds no keyword
    script:
        "../../scripts/text_keyword_table.py"


rule text_baseline:
    input:
        cooccurring=COOCCURRING_TABLE,
        videos=VIDEO_MANIFEST,
        subtitles=SUBTITLES_TABLE,
        frames=FRAMES_TABLE,
    output:
        predictions="results/text/baseline_{text_method}.parquet",
    log:
        "logs/text_baseline/{text_method}.log",
    benchmark:
        "results/benchmarks/text_baseline/{text_method}.tsv"
    conda:
        "../../envs/text.yaml"
    threads: 1
    params:
        events=config["events"],
        setting=get_text_baseline_setting(),
        default_language=TEXT["default_language"],
        seed=TEXT["baseline"]["seed"],
    script:
        "../../scripts/text_baseline.py"
