"""The dataset card: README.md with the Hugging Face Hub's YAML header (configs and their data files, license,
task_categories, size_categories, pretty_name) and sections written from the run (squidflow.publish.facts): every
figure in it is read from the run's own outputs, and a SIMULATED panel says so in the first paragraph.
"""

from __future__ import annotations

import re

import yaml

from squidflow.config.bounds import load_bounded
from squidflow.contracts.io import md_escape
from squidflow.judgments.waves import summary_line
from squidflow.presentation.table_format import md_row, md_rule, md_table
from squidflow.publish.facts import SQUID_E_CITATION, Facts, removal_requests
from squidflow.publish.tables import SPLIT_ORDER

SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
DEFAULT_CONFIG = "images"
DATASET_PLACEHOLDER = "DATASET_FOLDER"  # the recipe's config names this folder so; the reader puts its path there
VIDEOS_PLACEHOLDER = "VIDEOS_URL"  # ... and where the videos are served from, when the list names them by path
REBUILD_COMMAND = (
    ".venv/bin/snakemake --configfile rebuild.yaml --directory rebuild --cores all results/dataset/frames.parquet"
)
REBUILD_RELEASE = """\
The `images` config holds no pixels, as the SQUID-E release published its frames: each row names its video
(`video_id`, `source`) and the decode-order frame number (`frame_index`). The release's own source rebuilds them:
`sources: [{type: squid-e-release}]` with `frames.mode: exact` extracts exactly the release's listed frames
(results/dataset/images/<video_id>/<frame_index>.jpg). Videos that have been taken down cannot be rebuilt."""


def rebuild_config(f: Facts) -> str:
    """The recipe's config (YAML): the published URL list as a `urls` source, its frames taken exactly, with the
    settings that made the published frames' pixels (decoder, letterbox, image format and quality)."""
    pixels = ("decoder", "letterbox", *(("letterbox_below", "letterbox_to") if f.frames.get("letterbox") else ()))
    frames = {"mode": "exact", **{k: f.frames[k] for k in pixels if k in f.frames}}
    selection = {k: f.frames[k] for k in ("image_format", "image_quality") if k in f.frames}
    source = {"type": "urls", "path": f"{DATASET_PLACEHOLDER}/{f.rebuild_list}"}
    if f.rebuild_relative:
        source["base_url"] = f"{VIDEOS_PLACEHOLDER}/"
    config = {"stages": ["videos", "frames"], "sources": [source], "frames": frames}
    # the frames' split is the published one: no SQUID-E release file is fetched to make its test split (offline)
    config["splits"] = {"release_test": False}
    if selection:
        config["selection"] = selection
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100).rstrip()


def rebuild_recipe(f: Facts) -> list[str]:
    """The card's recipe for reference-mode images: a config and one command, which
    tests/e2e/test_rebuild_recipe.py follows as printed."""
    if not f.rebuild_list:
        return [REBUILD_RELEASE]
    served = (
        f" and `{VIDEOS_PLACEHOLDER}` by the address the videos are served from (the list names videos from a local "
        "folder by their path in it, `<event>/<file>` as in `source`; a copy of that folder is served by "
        "`python -m http.server 8000 --bind 127.0.0.1 --directory FOLDER`, then the address is http://127.0.0.1:8000)"
        if f.rebuild_relative
        else ""
    )
    return [
        "The `images` config holds no pixels (`publish.images: reference`), as the SQUID-E release published its "
        "frames: each row names its video (`video_id`; `source`, its URL or its path in its source's folder) and the "
        f"decode-order frame number (`frame_index`). `{f.rebuild_list}` lists the videos with the frame numbers "
        "published of each (a squidflow URL list: url, event, video_id, frames). To rebuild the JPEGs, save this as "
        f"`rebuild.yaml` in a squidflow clone, with `{DATASET_PLACEHOLDER}` replaced by this folder's absolute "
        f"path{served}:",
        "",
        "```yaml",
        rebuild_config(f),
        "```",
        "",
        "and run, in the clone:",
        "",
        "```bash",
        REBUILD_COMMAND,
        "```",
        "",
        "The image `<video_id>_<frame_index>` is then rebuild/results/dataset/images/<video_id>/<frame_index>.jpg "
        "(rebuild/results/dataset/frames.parquet's `image_path`): the frame this dataset was made from, pixel for "
        "pixel, when the video file is the same. Videos that have been taken down cannot be rebuilt.",
    ]


# Issue 57 case 10: the published text is kept as it was given; what a reader must know about it.
USING_THE_DATA = (
    "Text columns (`prompt`, `hit`, `excluded_because`, the images' `title`, `source` and `license`, the keywords) "
    "hold what the videos' sources, the annotation platform and the raters gave, unchanged: a value may start "
    "with `=`, `+`, `-` or `@`, or hold markup. Read them as text. A spreadsheet may run such a cell as a formula "
    "(`=HYPERLINK(...)`), and a page that shows one must escape it. Every CSV squidflow writes from them "
    "(`rebuild/videos.csv`, the tables of its report) starts such a cell with an apostrophe (`'=`), so it opens as "
    "text. Raters are named by pseudonym (`Ann<k>`) only."
)


def size_category(n: int) -> str:
    return next((label for limit, label in SIZE_CATEGORIES if n < limit), "n>10M")


def header(facts: Facts) -> dict:
    """The Hub's YAML header: one entry of `configs` per published config, each split's shards as a glob."""
    configs = []
    for config, splits in facts.splits.items():
        entry = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": f"data/{config}/{s}-*"} for s in SPLIT_ORDER if s in splits]
        configs.append(entry)
    licence = {"license": facts.license}
    if facts.license == "other":  # the Hub's way to name a licence it does not list
        licence |= {"license_name": facts.license_name, "license_link": facts.license_link}
    return {
        "pretty_name": facts.pretty_name,
        **licence,
        "task_categories": ["image-classification"],
        "tags": ["human-judgments", "uncertainty", "soft-labels", "croissant", "squidflow"],
        "size_categories": [size_category(facts.counts.get(DEFAULT_CONFIG, 0))],
        "configs": configs,
    }


def _list(items) -> str:
    return ", ".join(md_escape(i) for i in items) if items else "none recorded"


def _agreement(facts: Facts) -> list[str]:
    t = facts.agreement
    if t is None or t.is_empty():
        return ["No agreement table was computed in this run."]
    has_ci = "alpha_lo" in t.columns
    lines = [
        "Inter-annotator agreement of the first-round ratings (SQUID-E Table 7, from results/tables/table7_agreement.csv"
        + (", with bootstrap intervals over images, `intervals`" if has_ci else "")
        + "):",
        "",
        md_row(["Variant", "Spearman", "Krippendorff's α", "κ (3 bins)"]),
        md_rule(4),
    ]

    def cell(row, name):
        v = row.get(name)
        if v is None:
            return "–"
        lo, hi = row.get(f"{name}_lo"), row.get(f"{name}_hi")
        return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else f"{v:.3f}"

    for row in t.iter_rows(named=True):
        lines.append(
            md_row([md_escape(row["variant"]), cell(row, "spearman"), cell(row, "alpha"), cell(row, "kappa_3")])
        )
    return lines


def card(facts: Facts) -> str:
    """README.md: the YAML header, then the sections."""
    f = facts
    out = [
        "---",
        yaml.safe_dump(header(f), sort_keys=False, allow_unicode=True).strip(),
        "---",
        "",
        f"# {md_escape(f.pretty_name)}",
        "",
    ]
    if f.judgment_source == "simulated":
        out += [
            "**This is squidflow's offline demo: the videos are SYNTHETIC (made by ffmpeg) and every judgment comes "
            "from a SIMULATED annotator panel, not from people. Use it to see the format, never as data about "
            "people.**",
            "",
        ]
    out += [_paragraph(f.description), ""]
    out += ["## Dataset structure", "", md_row(["Config", "Rows", "Splits"]), md_rule(3)]
    for config, splits in f.splits.items():
        out.append(
            md_row([f"`{config}`", f"{f.counts.get(config, 0):,}", ", ".join(f"{s} {n:,}" for s, n in splits.items())])
        )
    out += [
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'judgments = load_dataset("path/to/{f.name}", "judgments")  # or its Hub id once uploaded',
        f'images = load_dataset("path/to/{f.name}")  # the default config: images',
        "",
        "# A local folder you rebuilt (a takedown, a second round): `datasets` caches a local folder under its name",
        "# alone, so read its files afresh instead of the previous build's rows from ~/.cache/huggingface:",
        f'judgments = load_dataset("path/to/{f.name}", "judgments", download_mode="force_redownload",',
        '                         verification_mode="no_checks")',
        "```",
        "",
        "Columns: `images` — image id, video id, frame index, timestamp, event, split, k-means cluster, source, "
        "licence" + (", and the image (JPEG)" if f.image_mode == "embed" else "") + "; `judgments` — one rating "
        "(0–100) per row with its prompt, variant, round, annotator pseudonym, task page (hit) and position; "
        "`soft_labels` — per image, prompt and variant the mean, std, n, certainty bin, the ratings and the interval "
        "of the mean. `croissant.json` types every field; `lewidi/` holds the judgments in the LeWiDi 2025 format.",
        "",
        "## Using the data",
        "",
        USING_THE_DATA,
        "",
    ]
    out += [
        "## How the data were collected",
        "",
        f"- Sources: {_list(f.sources)}.",
        f"- Search queries: {_list(f.queries)}.",
        f"- Languages: {_list(f.languages)}.",
    ]
    if f.timeframe:
        out.append(f"- Videos fetched between {f.timeframe[0].isoformat()} and {f.timeframe[1].isoformat()} (UTC).")
    else:
        out.append("- When the videos were fetched was not recorded in this run.")
    if f.videos is not None:
        out += [
            "",
            *md_table(
                ["Event", "Status", "Videos"], f.videos.select("event", "status", "videos").iter_rows(), data=(0, 1)
            ),
        ]
    if f.dropped:
        out += ["", "### Dropped videos", "", f.dropped]
    out += ["", "## How frames were chosen", ""]
    if f.frames:
        out.append(
            f"{f.frames['n']} frames per video were extracted at even intervals, embedded with the "
            f"`{md_escape(f.frames['backbone'])}` backbone, and {f.frames['k']} per video were kept by k-means "
            "(the frame nearest each cluster centre; SQUID-E supplement A.1)."
        )
    else:
        out.append(
            "The frames are the SQUID-E release's (video id and decode-order frame number); this run selected none."
        )
    out += [
        "",
        "## Annotation protocol",
        "",
        f"- Platform: {f.platform_name}.",
        f"- Task wording: “{md_escape(f.task_wording)}”" if f.task_wording else "- Task wording: see the task pages.",
        variant_wording(f.images_per_hit),
    ]
    if f.task_pages:
        out.append("- Task pages: " + ", ".join(f"[{p}]({p})" for p in f.task_pages) + ".")
    for variant, (lo, med, hi) in f.raters.items():
        out.append(f"- Raters per image, variant {md_escape(variant)}: median {med:g} (min {lo}, max {hi}).")
    if f.annotators:
        why = "; ".join(f"{md_escape(a)}: {md_escape(r or 'excluded')}" for a, r in f.excluded)
        out.append(
            f"- Raters excluded: {len(f.excluded)} of {f.annotators}"
            + (f" ({why})" if why else "")
            + ". Their ratings stay in the `judgments` config with `excluded` true and `excluded_because`; the "
            "soft labels and the agreement below leave them out."
        )
    if len(f.waves) > 1:
        out.append(
            "- Ratings per wave: "
            + ", ".join(f"{md_escape(w)} {n:,}" for w, n in f.waves.items())
            + " (the `wave` column; the soft labels use every wave, the agreement table the first)."
        )
    if f.precision.get("median") is not None:  # what precision the soft labels reach, and what it took (issue 59)
        took = (
            f" from {f.precision['ratings']:,} ratings ({f.precision['kept']:,} kept)"
            if "ratings" in f.precision
            else ""
        )
        none = f"; {f.precision['without']:,} with fewer than two ratings have none" if f.precision["without"] else ""
        out.append(
            f"- Precision: the 95% interval of a soft label's mean rating (`mean_lo`, `mean_hi`) is "
            f"{f.precision['median']:.1f} rating points wide at the median and {f.precision['p90']:.1f} at the 90th "
            f"percentile, over {f.precision['labels']:,} soft labels{took}{none}."
        )
    for effect in f.wave_effects:  # how each next round narrowed the soft labels' intervals it re-rated
        out.append(f"- Next round: {md_escape(summary_line(effect))} (`mean_lo`, `mean_hi` of `soft_labels`).")
    out.append(f"- Pay: {md_escape(f.pay)}." if f.pay else "- Pay: not stated in the config (publish.pay).")
    out.append(f"- Annotators: {md_escape(f.annotator_demographics)}.")
    out += ["", "## Agreement", "", *_agreement(f), ""]
    out += ["## Known limitations", ""]
    out += [f"- {md_escape(x)}" for x in f.rai.get("data_limitations", [])]
    out += [f"- {md_escape(x)}" for x in f.rai.get("data_biases", [])]
    out += ["", "## Personal and sensitive information", ""]
    out += [f"- {md_escape(x)}" for x in f.rai.get("personal_sensitive_information", [])]
    out += ["", "## Images", ""]
    if f.image_mode == "reference":
        out += rebuild_recipe(f)
    else:
        out.append("The `images` config embeds each selected frame as JPEG bytes (the `datasets` Image feature).")
    out += [
        "",
        "## Licences and terms",
        "",
        f"The dataset (its tables, judgments and card) is released under `{md_escape(f.license_name if f.license == 'other' else f.license)}` "
        f"({md_escape(f.license_url)}). {md_escape(f.terms)}",
        "",
    ]
    if f.licences:
        out += [
            "Images by the licence of their video, as its source states it (`license` in the `images` config; "
            "`unknown`: the source states none):",
            "",
            *md_table(["Licence", "Images"], [(k, f"{n:,}") for k, n in f.licences.items()], data=(0,)),
            "",
        ]
    out += ["## Removal requests", "", md_escape(removal_requests(f.contact)), ""]
    out += changes_section(f)
    fence = _fence(f.citation)
    out += [
        "## How to cite",
        "",
        "The dataset:",
        "",
        f"{fence}bibtex",
        f.citation.strip(),
        fence,
        "",
        "The method and the original SQUID-E dataset:",
        "",
        "```bibtex",
        SQUID_E_CITATION,
        "```",
        "",
    ]
    return "\n".join(out)


def _paragraph(text: str) -> str:
    """Data as one inert Markdown paragraph (io.md_escape), a leading `#` escaped too (no heading)."""
    out = md_escape(text)
    return "\\" + out if out.lstrip().startswith("#") else out


def variant_wording(images_per_hit: int) -> str:
    """The task variants as this dataset's task pages showed them (SQUID-E's design: six images per page)."""
    if images_per_hit <= 0:  # the release's rows: the paper's design
        return (
            "- Variant A shows six images of an event from six different videos under that event's prompt; variant B "
            "shows images under the prompt of a similar event (SQUID-E §3.2)."
        )
    many = f"{images_per_hit} images" if images_per_hit != 1 else "1 image"
    return (
        f"- Variant A shows up to {many} of an event per task page, from different videos where the event has "
        "enough, under that event's prompt; variant B shows images under the prompt of a similar event (SQUID-E "
        "§3.2, whose pages showed six)."
    )


VERSION_MARK = "<!-- squidflow-version:"


def version_rows(f) -> list[tuple[str, str]]:
    """Each version of the published data and what it changed, with counts (never a video id): the first release
    (publish.version), each next round of ratings and each change of method (the minor number: the rounds first,
    then the methods, squidflow.publish.methods), the removals on request (the patch number)."""
    from squidflow.videos.takedown import published_version

    rounds = [(w, n) for w, n in f.waves.items() if w != "first"]
    first = f.waves.get("first")
    rows = [
        (
            f.base_version or f.version,
            "first release" + (f": {first:,} ratings of round 1" if first is not None else ""),
        )
    ]
    for k, (wave, n) in enumerate(rounds, start=1):
        rows.append(
            (published_version(f.base_version, 0, k), f"{wave.replace('round', 'round ')}: {n:,} ratings added")
        )
    for j, keys in enumerate(f.method_changes, start=len(rounds) + 1):
        rows.append((published_version(f.base_version, 0, j), f"method changed: {', '.join(keys) or 'settings'}"))
    removed = sum(f.changes.values())
    if removed:
        reasons = ", ".join(f"{reason} {v:,}" for reason, v in f.changes.items())
        what = f"{removed:,} video{'s' if removed != 1 else ''} removed on request ({reasons})"
        if f.taken_down:
            what += (
                f": {f.taken_down.get('ratings', 0):,} ratings and {f.taken_down.get('images', 0):,} rated images "
                "removed"
            )
        rows.append((f.version, what))
    return rows


def changes_section(f) -> list[str]:
    """The card's "Changes": each version with its counts, the removals by reason, and the version and data digest
    `publish check` compares with the data files (an HTML comment)."""
    out = ["## Changes", "", *md_table(["Version", "What changed"], version_rows(f), data=(0, 1)), ""]
    if len(f.waves) > 1 or f.changes or f.method_changes:
        out += [
            "Ratings by round as published (the `wave` column; after the removals, if any). A next round and a change "
            "of method raise the minor number, a removal on request the patch number.",
            "",
        ]
    if f.changes:
        n = sum(f.changes.values())
        out += [
            f"Version {md_escape(f.version)} (from {md_escape(f.base_version)}): {n:,} "
            f"video{'s' if n != 1 else ''} removed on request, with every image, judgment and soft label made "
            "from them. By reason:",
            "",
            *md_table(["Reason", "Videos removed"], [(k, f"{v:,}") for k, v in f.changes.items()], data=(0,)),
            "",
        ]
    if f.data_digest:
        out += [f"{VERSION_MARK} {md_escape(f.version)} data-sha256 {f.data_digest} -->", ""]
    return out


def recorded_version(text: str) -> tuple[str, str] | None:
    """(version, data digest) the card records (its VERSION_MARK comment), None when it has none."""
    for line in text.splitlines():
        if line.startswith(VERSION_MARK):
            parts = line[len(VERSION_MARK) :].replace("-->", "").split()
            if len(parts) == 3 and parts[1] == "data-sha256":
                return parts[0], parts[2]
    return None


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so the text cannot close it (CommonMark)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def read_header(text: str) -> dict:
    """The YAML header of a card (empty when it has none)."""
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    return (load_bounded(text[3:end], "the card's YAML header") or {}) if end > 0 else {}
