"""The demo's HTML report in a real browser: `snakemake --report` on a finished small workflow, unzipped and opened in
headless Chromium. The page loads without console errors, every stage's category is there, every file of
results/tables/ and results/figures/ is in it with a caption, and each table, figure and page opens.

Screenshots of the report's main page and of one figure are written to $SQUIDFLOW_SCREENSHOTS (default: the test's
temporary folder, printed at the end of the test)."""

from __future__ import annotations

import os
import re
import shutil
import time
import zipfile
from pathlib import Path

import pytest
from helpers.browser import chromium_page, playwright_or_skip
from helpers.png_facts import figure_facts
from helpers.report_walk import reported_categories, walk


def results_table(results: dict, paths: list[str]) -> tuple[dict[tuple, str], str | None]:
    """A subcategory's rows as the report's page builds them (abstract_results.js, getData): the label columns in
    order of first appearance, a second label with exactly two values that each label half of the results becomes a
    toggle, and each row is keyed by its label values plus the toggle value. Returns key -> result path and fails
    when two results share a key (the page would show only one of them) or a row lacks a toggle value (the page
    would break on it)."""
    entries = [results[p] for p in paths]
    if not all(e["labels"] for e in entries):
        return {(p,): p for p in paths}, None
    order: list[str] = []
    for e in entries:
        order += [k for k in e["labels"] if k not in order]
    toggles = {}
    for label in order[1:]:
        values = [e["labels"][label] for e in entries if label in e["labels"]]
        unique = sorted(set(values))
        if len(unique) == 2 and all(values.count(v) * 2 == len(entries) for v in unique):
            toggles[label] = unique
    if len(toggles) > 1:
        toggles = {}
    rows: dict[tuple, str] = {}
    for path, e in zip(paths, entries, strict=True):
        key = tuple(e["labels"].get(k, "") for k in order if k not in toggles)
        key += tuple(e["labels"].get(k) for k in toggles)
        assert key not in rows, f"{path} and {rows[key]} have the same labels {key}: the report shows only one"
        rows[key] = path
    if toggles:
        ((label, values),) = toggles.items()
        for key in {k[:-1] for k in rows}:
            for v in values:
                assert key + (v,) in rows, f"{paths}: row {key} has no result for {label}={v}; the page breaks"
    return rows, next(iter(toggles), None)


def check_report(report_html: Path, results_dir: Path, categories: list[str], screenshots: Path) -> dict:
    """Open the report in Chromium and check it; returns what was opened (for the caller's summary)."""
    report_dir = report_html.parent
    workdir = results_dir.parent
    expected = sorted(
        str(p.relative_to(workdir))
        for folder in ("tables", "figures")
        for p in (results_dir / folder).rglob("*")
        if p.is_file() and not p.name.startswith(".")
    )  # not Snakemake's .snakemake_timestamp
    assert expected, f"nothing under {results_dir}/tables or figures"
    errors: list[str] = []
    opened: dict[str, str] = {}
    with chromium_page(viewport={"width": 1400, "height": 900}) as page:
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url[:200]} {r.failure}"))
        page.goto(report_html.as_uri())
        page.wait_for_function("typeof app !== 'undefined' && document.querySelectorAll('#app a').length > 3")
        page.get_by_text("Demo data.", exact=False).first.wait_for()
        results = page.evaluate("results")
        cats = page.evaluate("categories")
        page.screenshot(path=str(screenshots / "report_main_page.png"))

        # every table and figure is in the report, with a caption
        missing = [f for f in expected if f not in results]
        assert not missing, f"in results/tables or results/figures but not in the report: {missing}"
        no_caption = [f for f, r in results.items() if not r["caption"].strip()]
        assert not no_caption, f"in the report without a caption: {no_caption}"
        assert all(c in cats for c in categories), f"categories {sorted(cats)}, expected {categories}"
        for c in categories:  # listed in the page's menu
            assert page.get_by_role("link", name=c, exact=True).count() >= 1, c

        # each result opens: images load, pages load, tables are files the download link points at
        figure_shot = None
        for cat, subcats in cats.items():
            for subcat, paths in subcats.items():
                rows, toggle = results_table(results, paths)
                n_rows = len(rows) // 2 if toggle else len(rows)
                # from the main menu (no results table), as a reader comes: the category, then the subcategory
                page.evaluate("() => app.setView({navbarMode: 'menu', content: 'rulegraph'})")
                page.wait_for_function("() => document.querySelectorAll('table tbody tr').length === 0")
                page.evaluate("c => app.showCategory(c)", cat)
                if len(subcats) > 1:
                    page.get_by_role("link", name=subcat, exact=True).first.click()
                page.wait_for_function("n => document.querySelectorAll('table tbody tr').length === n", arg=n_rows)
                toggle_labels = page.locator("fieldset label")
                states = toggle_labels.count() or 1
                for state in range(states):
                    if toggle_labels.count():
                        toggle_labels.nth(state).click()
                    table_rows = page.locator("table tbody tr")
                    for i in range(n_rows):
                        view = table_rows.nth(i).locator("a").first
                        href = view.get_attribute("href")
                        if href and href != "#":  # CSV, Markdown, LaTeX: a link to the file in the report
                            target = report_dir / href
                            assert target.is_file() and target.stat().st_size > 0, (cat, subcat, href)
                            opened[href] = "file"
                            continue
                        view.click()
                        content, uri, shown = page.evaluate(
                            "[app.state.content, app.state.contentPath, app.state.resultPath]"
                        )
                        if content == "img":
                            img = page.locator(f'img[src="{uri}"]')
                            img.wait_for()
                            page.wait_for_function("el => el.complete && el.naturalWidth > 0", arg=img.element_handle())
                            width = img.evaluate("el => el.naturalWidth")
                            assert width == figure_facts(report_dir / uri)["width"], uri
                            if figure_shot is None and "contact_sheets" in shown:
                                figure_shot = screenshots / "report_figure.png"
                                page.screenshot(path=str(figure_shot))
                        elif content == "html":
                            frame = page.locator(f'iframe[src="{uri}"]').element_handle().content_frame()
                            assert frame is not None, uri
                            # the iframe is in the page before its document is: wait until it has navigated there
                            deadline = time.monotonic() + 60
                            while not frame.url.endswith(uri):
                                assert time.monotonic() < deadline, f"{uri}: the frame never opened it ({frame.url})"
                                page.wait_for_timeout(100)
                            frame.wait_for_load_state("load")
                            assert frame.inner_text("body").strip(), f"{uri} shows nothing"
                            if "annotation" in uri:  # task pages: every image inlined and decoded
                                broken = frame.evaluate(
                                    "[...document.images].filter(i => i.naturalWidth === 0 "
                                    "&& getComputedStyle(i).display !== 'none').length"
                                )
                                assert broken == 0, f"{uri}: {broken} images do not load"
                        else:
                            raise AssertionError(f"{cat} / {subcat}: row {i} opened {content!r}")
                        opened[uri] = content
    assert not errors, "\n".join(errors)
    in_report = {r["data_uri"] for r in results.values()}
    assert in_report <= set(opened), f"results never opened: {sorted(in_report - set(opened))}"
    assert figure_shot is not None
    return opened


@pytest.mark.slow
def test_demo_report_opens_in_chromium(small_workflow, tmp_path):
    playwright_or_skip()
    screenshots = Path(os.environ.get("SQUIDFLOW_SCREENSHOTS") or tmp_path / "screenshots")
    screenshots.mkdir(parents=True, exist_ok=True)
    report_zip = tmp_path / "report.zip"
    res = small_workflow.snakemake("--report", str(report_zip), timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    with zipfile.ZipFile(report_zip) as z:
        z.extractall(tmp_path / "unzipped")
    report_html = tmp_path / "unzipped" / "report" / "report.html"
    assert report_html.is_file()
    # every category of the report's outputs that the small run (every stage enabled) made, and the run summary's
    categories = sorted(reported_categories(walk(), small_workflow.directory))
    assert len(categories) >= 8 and "Run" in categories, categories
    opened = check_report(report_html, small_workflow.results, categories, screenshots)
    assert sum(1 for c in opened.values() if c == "img") >= 10
    assert (screenshots / "report_main_page.png").stat().st_size > 20_000
    print(f"\nreport screenshots: {screenshots}/report_main_page.png, {screenshots}/report_figure.png")


# Display strings a config may carry (an event's prompt and description reach the jobs' params, which the report
# embeds as JSON in a <script> tag): issue 31's payload, and markup that would run if the page put it into its DOM.
PAYLOAD = "</script><script>alert(1)</script>"
HOSTILE_DISPLAY = f"""events:
  parade:
    prompt: "{PAYLOAD}"
    description: "{PAYLOAD} <img src=x onerror=alert(2)>"
"""


def assert_report_inert(report_html: Path) -> int:
    """Open a report whose params carry PAYLOAD in Chromium, show every result's details (its job's params) and
    every rule's code: no dialog, no page error, and the payload is in the page as text. Returns the results shown."""
    dialogs: list[str] = []
    errors: list[str] = []
    with chromium_page(viewport={"width": 1400, "height": 900}) as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
        page.goto(report_html.as_uri())
        page.wait_for_function("typeof app !== 'undefined' && document.querySelectorAll('#app a').length > 3")
        assert not dialogs and not errors, dialogs + errors  # the payload ran as the page loaded (0.3.0)
        results = page.evaluate("results")
        carrying = [path for path, r in results.items() if PAYLOAD in r["job_properties"]["params"]]
        assert carrying, "no result's params carry the payload: the test shows nothing"
        for path in carrying:
            page.evaluate("p => app.showResultInfo(p)", path)
            page.get_by_text("Job parameters").first.wait_for()
            assert page.get_by_text(PAYLOAD, exact=False).count() >= 1, path  # shown as text
        for rule in page.evaluate("Object.keys(rules)"):  # each rule's code and software, as a click on the graph
            page.evaluate("r => app.setView({navbarMode: 'ruleinfo', ruleinfo: r})", rule)
        page.evaluate("() => app.showReportInfo()")
        page.wait_for_timeout(500)
    assert not dialogs and not errors, dialogs + errors
    return len(carrying)


@pytest.mark.slow
def test_a_report_with_hostile_display_strings_runs_no_script(small_workflow, tmp_path):
    """Issue 31: an event named `<script>alert(1)</script>` ran in the report (four dialogs). Names are now refused
    where they enter, but display strings (an event's prompt and description) still reach the report as the jobs'
    params, embedded as JSON in a <script> tag: squidflow.report.script_data writes every `<` there as `\\u003c`.
    Without that wrap the same report runs the payload (the test shows it, so the wrap stays: docs/upstream.md)."""
    playwright_or_skip()
    copy = type(small_workflow)(tmp_path / "run", (*small_workflow.configfiles, tmp_path / "hostile.yaml"))
    shutil.copytree(small_workflow.directory, copy.directory, symlinks=True)
    (tmp_path / "hostile.yaml").write_text(HOSTILE_DISPLAY)
    res = copy.snakemake("--report", str(tmp_path / "report.zip"), timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / "report.zip") as z:
        z.extractall(tmp_path / "unzipped")
    report_html = tmp_path / "unzipped" / "report" / "report.html"
    assert PAYLOAD not in report_html.read_text(encoding="utf-8")
    assert assert_report_inert(report_html) >= 2  # the contact sheets and the evaluation tables at least

    # Why squidflow.report.script_data stays (docs/upstream.md): the same report as Snakemake's renderers write it
    # without the wrap (the wrap's one change, every `<` of their JSON written `\\u003c`, undone; json.dumps itself
    # never writes `\\u003c`) runs the payload as the page loads.
    unwrapped = tmp_path / "unzipped" / "report" / "unwrapped.html"
    data = re.compile(
        r'(<script id="(?:results|categories|rulegraph|runtimes|timeline|rules|metadata)">)(.*?)(</script>)', flags=re.S
    )  # the renderers' JSON (the libraries' scripts beside it are left as they are)
    unwrapped.write_text(
        data.sub(
            lambda m: m.group(1) + m.group(2).replace("\\u003c", "<") + m.group(3),
            report_html.read_text(encoding="utf-8"),
        ),
        encoding="utf-8",
    )
    assert PAYLOAD in unwrapped.read_text(encoding="utf-8")
    assert dialogs_on_load(unwrapped), "the unwrapped report ran no script: the wrap may go (docs/upstream.md)"


def dialogs_on_load(report_html: Path) -> list[str]:
    """The dialogs a report opens while it loads in Chromium."""
    dialogs: list[str] = []
    with chromium_page(viewport={"width": 1400, "height": 900}) as page:
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(report_html.as_uri())
        page.wait_for_timeout(2000)
    return dialogs
