"""The run summary the report opens with: what ran, with which config files, and how long each step took.

Snakemake records, for every output it wrote, the job that wrote it and when that job started and ended
(`.snakemake/metadata/`, one JSON record per output file). Read back, those records say what a reader of a result
wants to know before trusting it: which steps made the results in this folder, how many jobs each step took and how
long they ran, and which config files the run was given. A researcher comparing two runs, or planning a paper-scale
run from the demo's timings, reads it here instead of grepping logs.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
from pathlib import Path
from typing import cast

import polars as pl

RECORD_COLUMNS = {"rule": pl.Utf8, "job_hash": pl.Int64, "starttime": pl.Float64, "endtime": pl.Float64}


def job_records(metadata_dir: str | Path = ".snakemake/metadata") -> pl.DataFrame:
    """One row per job Snakemake recorded in `metadata_dir` (rule, job_hash, starttime, endtime, seconds).

    A job with several outputs has a record per output; they share rule and job hash, so they collapse into one row
    (first start, last end). Records that are not JSON or lack times (an older Snakemake, a job still running) are skipped."""
    rows = []
    for folder, _, files in os.walk(metadata_dir):
        for name in files:
            try:
                record = json.loads(Path(folder, name).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                continue
            if not isinstance(record, dict) or record.get("incomplete"):
                continue
            start, end = record.get("starttime"), record.get("endtime")
            if record.get("rule") and isinstance(start, int | float) and isinstance(end, int | float):
                rows.append(
                    {
                        "rule": record["rule"],
                        "job_hash": int(record.get("job_hash") or 0),
                        "starttime": float(start),
                        "endtime": float(end),
                    }
                )
    # the outputs of one job share its hash; their recorded times differ by milliseconds (a folder's by more)
    jobs = (
        pl.DataFrame(rows, schema=RECORD_COLUMNS)
        .group_by("rule", "job_hash", maintain_order=True)
        .agg(pl.col("starttime").min(), pl.col("endtime").max())
        .select(list(RECORD_COLUMNS))
    )
    # a job run by a cluster executor is recorded when the main process sees it finish, with an end before its
    # start: its time is unknown here (Slurm's sacct has it), not zero
    seconds = pl.when(pl.col("endtime") > pl.col("starttime")).then(pl.col("endtime") - pl.col("starttime"))
    return jobs.with_columns(seconds.alias("seconds")).sort("starttime")


def rule_times(jobs: pl.DataFrame) -> pl.DataFrame:
    """Per rule: jobs, summed job time, the longest job, first start; in pipeline (first start) order. A rule whose
    jobs all ran through a cluster executor has no recorded time (null)."""
    return (
        jobs.group_by("rule", maintain_order=True)
        .agg(
            pl.len().alias("jobs"),
            pl.when(pl.col("seconds").count() > 0).then(pl.col("seconds").sum()).alias("total_s"),  # null: unknown
            pl.col("seconds").max().alias("max_s"),
            pl.col("starttime").min().alias("first_start"),
        )
        .sort("first_start")
    )


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not recorded"
    seconds = float(seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, s = divmod(round(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours} h {m:02d} min" if hours else f"{m} min {s:02d} s"


def _jobs(n: int) -> str:
    return f"{n} job" if n == 1 else f"{n} jobs"


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M:%S")


STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5em;max-width:60em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border-bottom:1px solid #ddd;padding:.2em .8em;"
    "text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}"
    ".note{background:#fff4e5;border-left:4px solid #E69F00;padding:.5em 1em}code{background:#f3f3f3}"
)


def summary_html(
    jobs: pl.DataFrame,
    *,
    configfiles: list[str],
    stages: list[str],
    data_note: str = "",
    made_by: str = "",
    snakemake_version: str = "",
) -> str:
    """The run summary as a self-contained HTML page (no external file: it opens inside the report's viewer).
    `made_by` names the squidflow version and commit (`squidflow.version.describe`)."""
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>squidflow run summary</title><style>",
        STYLE,
        "</style></head><body><h1>squidflow run summary</h1>",
    ]
    if data_note:
        parts.append(f"<p class='note'>{html.escape(data_note)}</p>")
    parts += _configuration(configfiles, stages, made_by, snakemake_version)
    parts.append("<h2>How long</h2>")
    if jobs.is_empty():
        parts.append("<p>Snakemake recorded no finished job in this folder (.snakemake/metadata).</p>")
    else:
        parts += _how_long(jobs, rule_times(jobs))
    parts.append("</body></html>\n")
    return "".join(parts)


def _configuration(configfiles: list[str], stages: list[str], made_by: str, snakemake_version: str) -> list[str]:
    """The page's "Configuration": the config files in order, the stages, the versions, each file's text folded."""
    esc = html.escape
    parts = ["<h2>Configuration</h2><ul>"]
    parts += [
        f"<li>config file <code>{esc(str(c))}</code> (in this order; later files override earlier keys)</li>"
        for c in configfiles
    ] or ["<li>no config file</li>"]
    parts.append(f"<li>stages: {esc(', '.join(stages))}</li>")
    if made_by:
        parts.append(f"<li>made by <code>{esc(made_by)}</code></li>")
    if snakemake_version:
        parts.append(f"<li>Snakemake {esc(snakemake_version)}</li>")
    parts.append("</ul>")
    for c in configfiles:
        try:
            text = Path(c).read_text(encoding="utf-8")
        except OSError:
            continue
        parts.append(f"<details><summary><code>{esc(str(c))}</code></summary><pre>{esc(text)}</pre></details>")
    return parts


def _how_long(jobs: pl.DataFrame, per_rule: pl.DataFrame) -> list[str]:
    """The page's times: the run's span and job time, then "What ran" (per rule) and "Longest jobs" (the ten)."""
    esc = html.escape
    start, end = cast(float, jobs["starttime"].min()), cast(float, jobs["endtime"].max())
    unknown = jobs["seconds"].null_count()
    total = cast(float, jobs["seconds"].sum())
    ran = (
        f"the jobs ran {esc(_duration(total))} in total"
        if not unknown
        else f"the {_jobs(jobs.height - unknown)} run by this machine's Snakemake ran "
        f"{esc(_duration(total))} in total; {unknown} ran through a cluster executor, which "
        "records no job time in Snakemake's metadata (Slurm's <code>sacct</code> has them)"
    )
    parts = [
        f"<p>{jobs.height} jobs of {per_rule.height} steps made the results in this folder, between "
        f"{esc(_when(start))} and {esc(_when(end))} ({esc(_duration(end - start))} from the first job's start to "
        f"the last one's end, including any pause between runs); {ran}. The report's <i>Statistics</i> panel "
        f"shows every job on a timeline.</p>",
        "<h2>What ran</h2><table><tr><th>step (rule)</th><th>jobs</th><th>job time</th>"
        "<th>longest job</th><th>first started</th></tr>",
    ]
    for r in per_rule.iter_rows(named=True):
        parts.append(
            f"<tr><td><code>{esc(r['rule'])}</code></td><td class='n'>{r['jobs']}</td>"
            f"<td class='n'>{esc(_duration(r['total_s']))}</td><td class='n'>{esc(_duration(r['max_s']))}"
            f"</td><td>{esc(_when(r['first_start']))}</td></tr>"
        )
    parts.append("</table><h2>Longest jobs</h2><table><tr><th>step (rule)</th><th>time</th><th>started</th></tr>")
    for r in jobs.drop_nulls("seconds").sort("seconds", descending=True).head(10).iter_rows(named=True):
        parts.append(
            f"<tr><td><code>{esc(r['rule'])}</code></td><td class='n'>{esc(_duration(r['seconds']))}</td>"
            f"<td>{esc(_when(r['starttime']))}</td></tr>"
        )
    parts.append("</table>")
    return parts


def write_run_summary(
    path: str | Path,
    *,
    configfiles: list[str],
    stages: list[str],
    data_note: str = "",
    repo: str | Path | None = None,
    metadata_dir: str | Path = ".snakemake/metadata",
) -> pl.DataFrame:
    """Read Snakemake's job records, write the summary page to `path`; returns the per-rule times. `repo` is the
    workflow's folder, whose version and commit the page names."""
    from squidflow.contracts.io import write_text
    from squidflow.version import describe

    try:
        from snakemake import __version__ as snakemake_version
    except ImportError:
        snakemake_version = ""
    jobs = job_records(metadata_dir)
    from squidflow.fetch import redact_url_credentials

    page = summary_html(
        jobs,
        configfiles=configfiles,
        stages=stages,
        data_note=data_note,
        made_by=describe(repo),
        snakemake_version=snakemake_version,
    )
    write_text(path, redact_url_credentials(page))  # a proxy's password in a job's params never reaches the page
    return rule_times(jobs)
