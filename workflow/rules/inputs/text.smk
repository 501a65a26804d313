# The input functions, params and paths of workflow/rules/text.smk (a rules file may not hold functions,
# says `snakemake --lint`); included at the top of text.smk.

COOCCURRING_REPORT = "results/text/cooccurring_report.md"

TEXT_KEYWORDS_TABLE = "results/text/keywords.parquet"
SUBTITLES_TABLE = "results/text/subtitles.parquet"
COOCCURRING_TABLE = "results/text/cooccurring.parquet"


def get_demo_subtitle_files(wildcards):
    """The demo videos' SYNTHETIC subtitles (written by make_demo_subtitles) when the demo is a source: they lie beside
    the videos, where the reader looks for every video's subtitles."""
    if "demo" not in [s["type"] for s in config["sources"]]:
        return []
    return expand(DEMO_SUBTITLES, video_id=DEMO_VIDEO_IDS)


def get_text_baseline_setting():
    """The preprocessing setting the text-only event baseline reads: text.baseline.setting by name, else the first."""
    settings = TEXT["keywords"]["settings"]
    name = TEXT["baseline"]["setting"]
    if name is None:
        return settings[0]
    for s in settings:
        if s["name"] == name:
            return s
    raise ValueError(
        f"text.baseline.setting = {name!r} names no entry of text.keywords.settings "
        f"({[s['name'] for s in settings]})"
    )


def get_text_baseline_models():
    """The text-only event baselines, in the predictions format, for the evaluation stage (Table 2 style rows)."""
    if not stage_enabled("text"):
        return []
    return [
        {"name": f"text-{m} (co-occurring text)", "predictions": f"results/text/baseline_{m}.parquet"}
        for m in TEXT["baseline"]["methods"]
    ]


def get_text_outputs():
    if not stage_enabled("text"):
        return []
    outputs = [COOCCURRING_TABLE, COOCCURRING_REPORT, TEXT_KEYWORDS_TABLE]
    outputs += [m["predictions"] for m in get_text_baseline_models()]
    if JUDGMENT_SOURCE != "release":  # the keyword task to post on MTurk (variant K)
        outputs += [KEYWORD_HITS, KEYWORD_TEMPLATE]
    if get_keyword_batches():
        outputs += expand("results/tables/text_keywords.{ext}", ext=["csv", "md", "tex"])
    return outputs
