"""The data Snakemake's HTML report embeds in its `<script>` tags, made inert (issue 31).

`snakemake --report` writes each result's caption, labels and its job's params, the rules and the run's metadata into
report.html as JSON inside `<script>` tags (`var results = {...}`) with `json.dumps`, which leaves `<` as it is. A
param that holds text from the config or the data (an event's prompt or description is passed to the contact-sheet
and table jobs) with `</script><script>...` in it closed the tag early and ran as script in the reader's browser.
Here each of the report's JSON renderers is wrapped once, when the workflow is read (a `--report` run reads it too),
so that every `<` in its JSON is written `\\u003c`: the same JSON to the page's script, no tag for the HTML parser.

Why it stays (docs/upstream.md): the hole is Snakemake's (its report writes JSON into <script> with `</` as it is),
and every config string a job receives as a param reaches that JSON; closing it on squidflow's side would mean
escaping every such string on its way into params and back in every script. Only on the Snakemake versions it was
tested on (squidflow.runtime.upstream.TESTED); on another one a warning says so once and the report is Snakemake's own.
"""

from __future__ import annotations

import functools
import logging

from squidflow.runtime.upstream import within_tested

# The renderers of snakemake.report.html_reporter.data whose JSON the template puts inside a <script> tag
RENDERERS = ("render_results", "render_categories", "render_rulegraph", "render_rules", "render_runtimes",
             "render_timeline", "render_metadata")  # fmt: skip
_WRAPPED = "_squidflow_script_safe"


def script_safe_json(text: str) -> str:
    """JSON text with every `<` as `\\u003c` (JSON has `<` only inside strings, where the escape means the same)."""
    return text.replace("<", "\\u003c")


def escape_report_scripts(version: str | None = None) -> list[str]:
    """Wrap Snakemake's report renderers so that their JSON cannot close its script tag; returns the ones wrapped.
    A Snakemake outside the tested versions (`version`: the installed one unless given) or whose report is built
    otherwise is left as it is, and a warning says so."""
    if not within_tested(
        "snakemake",
        "the report's script data made inert: config strings in a job's params are embedded in the report as they are",
        version,
    ):
        return []
    try:
        from snakemake.report.html_reporter import data
    except ImportError:  # no Snakemake report here: nothing to make safe
        return []
    wrapped = []
    for name in RENDERERS:
        render = getattr(data, name, None)
        if render is None:
            logging.getLogger("squidflow").warning(
                "Snakemake's report has no %s: its data is embedded unescaped (squidflow.report.script_data)", name
            )
            continue
        if not getattr(render, _WRAPPED, False):
            setattr(data, name, _script_safe(render))
        wrapped.append(name)
    return wrapped


def _script_safe(render):
    @functools.wraps(render)
    def wrapper(*args, **kwargs):
        out = render(*args, **kwargs)
        return script_safe_json(out) if isinstance(out, str) else out

    setattr(wrapper, _WRAPPED, True)
    return wrapper
