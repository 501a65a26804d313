"""Headless Chromium for the tests that open a page (task pages, the report): one set-up, and what an MTurk worker's
browser does with a task page (the assignment ids in the query, the form posted to MTurk's externalSubmit)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def playwright_or_skip():
    """playwright's sync API, or the test skipped saying what is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip(f"needs {CHROMIUM} (make test-tools installs it)")
    return sync_api


@contextlib.contextmanager
def chromium_page(**page_options) -> Iterator:
    """A fresh page of a headless Chromium, closed afterwards."""
    sync_api = playwright_or_skip()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(**page_options)
        finally:
            browser.close()


def open_as_mturk_worker(page, page_path: Path, *, assignment: str, worker: str, hit: str) -> list[str]:
    """Open a task page the way MTurk shows it to a worker (ids in the query) and capture what its form posts to
    MTurk's externalSubmit; the returned list receives each posted body."""
    posted: list[str] = []

    def capture(route, request):
        posted.append(request.post_data)
        route.fulfill(status=200, body="ok")

    page.route("**/mturk/externalSubmit*", capture)
    page.goto(page_path.as_uri() + f"?assignmentId={assignment}&workerId={worker}&hitId={hit}")
    return posted


def posted_fields(posted: str) -> dict[str, str]:
    """The form fields of a body the task page posted."""
    return {k: v[0] for k, v in parse_qs(posted, keep_blank_values=True).items()}


def batch_row(hit_inputs: dict, answers: dict[str, str], *, hit: str, worker: str, status: str = "Submitted") -> dict:
    """One assignment's row of an MTurk batch-results CSV: MTurk writes the HIT's batch input columns as Input.* and
    the submitted form fields as Answer.*."""
    row = {"HITId": hit, "WorkerId": worker, "AssignmentStatus": status}
    row |= {f"Input.{k}": str(v) for k, v in hit_inputs.items()}
    return row | {f"Answer.{k}": v for k, v in answers.items()}
