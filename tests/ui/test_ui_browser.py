"""``ivm ui`` in a real browser: Debian's chromium driven by Playwright against the command itself.

The server runs as a subprocess over a small TPC-H window stream (SF 0.01); the test maintains the
same query over the same batches with its own ``MaintainedView`` and compares the page's table with
``result()`` after every step. Screenshots land in ``tests/ui/artifacts/`` (not committed).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from catalog.orderbook import orderbook_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, batches, write_stream
from planner.compiler import compile_query
from planner.demo import Q3_SQL
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from planner.workloads.tpch_streams import make_stream

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# The flags that keep chromium from reaching out: this machine's network is closed.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WINDOW, BATCH_SIZE, STEPS = 30_000, 5_000, 6
Q3_LIMIT = 10
REFUSED_SQL = "select l_orderkey, percentile_approx(l_quantity, 0.5) as p from lineitem group by l_orderkey"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium: make chromium"),
]
sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(tpch_sf001_dir: Path, tmp_path: Path):
    """``ivm ui`` on a free port, its TPC-H data the session's SF 0.01 tables."""
    (tmp_path / "tpch-sf0.01").symlink_to(tpch_sf001_dir, target_is_directory=True)
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "planner.cli", "ui", "--port", str(port), "--data-dir", str(tmp_path)],
                               cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/options", timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"ivm ui did not start: {process.communicate()[0]}")
            time.sleep(0.2)
    yield url
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("ivm ui did not stop on SIGTERM within 10 s")


@pytest.fixture
def blank_page():
    """A browser tab that has not opened the page yet."""
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        script_errors: list[str] = []
        page.on("pageerror", lambda error: script_errors.append(str(error)))
        yield page
        browser.close()
    assert not script_errors, f"the page's scripts failed: {script_errors}"


@pytest.fixture
def page(blank_page, server: str):
    blank_page.goto(server)
    _wait_until_ready(blank_page)
    return blank_page


def _table(page) -> list[list[str]]:
    return page.eval_on_selector_all("[data-testid=result-table] tr.current",
                                     "rows => rows.map(r => Array.from(r.cells, c => c.textContent))")


def _wait_until_ready(page) -> None:
    """The page fills its inputs from the server after it loads: typing earlier races with that."""
    page.wait_for_selector("body[data-ready=true]", timeout=15_000)


def _wait_for_batch(page, number: int) -> None:
    page.wait_for_selector(f"[data-testid=result-table][data-batch='{number}']", timeout=15_000)


def test_the_page_maintains_q3_as_the_view_does_checks_it_and_shows_refusals(page, tpch_sf001_tables):
    catalog = tpch_catalog()
    try:
        compile_query(REFUSED_SQL, catalog)
        pytest.fail("the refused query compiled: pick another")
    except UnsupportedSqlError as err:
        refusal = str(err)
    page.fill("[data-testid=sql-input]", REFUSED_SQL)
    page.click("[data-testid=explain]")
    error = page.locator("[data-testid=error]")
    error.wait_for(state="visible", timeout=15_000)
    assert refusal in error.text_content()
    page.screenshot(path=str(ARTIFACTS / "refused.png"))

    page.select_option("[data-testid=example]", label="TPC-H Q03")
    assert page.input_value("[data-testid=sql-input]") == Q3_SQL
    page.select_option("[data-testid=catalog]", "tpch")
    page.select_option("[data-testid=stream]", "window")
    page.fill("#window", str(WINDOW))
    page.fill("[data-testid=batch-size]", str(BATCH_SIZE))

    stream = list(batches(make_stream(tpch_sf001_tables, catalog, "window", WINDOW, seed=0), BATCH_SIZE))
    with MaintainedView(Q3_SQL, catalog) as view:
        seen_rows = seen_deleted = 0
        for number, batch in enumerate(stream[:STEPS], start=1):
            page.click("[data-testid=step]")
            _wait_for_batch(page, number)
            view.apply(batch)
            expected = [[str(value) for value in row] for row in view.result()]
            assert _table(page) == expected, f"after batch {number}"
            # a top 10: the table never holds more than 10 rows, the rows that left are listed apart
            assert page.locator("[data-testid=result-table] tr:not(:first-child)").count() <= Q3_LIMIT
            seen_deleted += page.locator("[data-testid=deleted-table] tr.deleted").count()
            seen_rows += len(expected)
        assert seen_rows > 0, "every step had an empty result: the comparison proved nothing"
        assert seen_deleted > 0, "no row left the top 10: the table's bound was not put to the test"
        assert error.is_hidden()

        stages = [node.stage.name for node in view.compiled.dataflow.stages]
        drawn = page.eval_on_selector_all("[data-testid=plan] [data-stage-name]:not([data-stage-name=''])",
                                          "nodes => nodes.map(n => n.dataset.stageName)")
        assert drawn == stages
        for table in ("customer", "orders", "lineitem"):
            assert page.locator(f"[data-testid=plan] [data-node='source:{table}']").count() == 1
        assert page.locator("[data-testid=chart] rect.bar").count() == len(view.result())
        assert page.locator("[data-testid=throughput] path.line").count() == 2
        assert _axes(page, "chart") == {"x": "revenue", "y": "l_orderkey · o_orderdate · o_shippriority"}
        assert _axes(page, "throughput") == {"x": "batch", "y": "↑ updates/s, ms (each its own scale)"}
        assert page.text_content("[data-testid=strategy]").startswith(
            "Strategy: AJU live tuples over the foreign-key tree rooted at lineitem\nUpdate cost (the worst stages): ")
        page.screenshot(path=str(ARTIFACTS / "q3-stepped.png"), full_page=True)

        page.click("[data-testid=check]")
        check = page.locator("[data-testid=check-result].equal")
        check.wait_for(timeout=30_000)
        assert check.text_content().startswith(f"equal after batch {STEPS}")

        page.click("[data-testid=start]")  # the rest of the stream, streamed to the page
        _wait_for_batch(page, len(stream))
        for batch in stream[STEPS:]:
            view.apply(batch)
        final = [[str(value) for value in row] for row in view.result()]
        assert _table(page) == final
    page.screenshot(path=str(ARTIFACTS / "q3-finished.png"), full_page=True)

    page.reload()  # a page opened later shows the run as it stands, inputs included
    _wait_until_ready(page)
    _wait_for_batch(page, len(stream))
    assert _table(page) == final
    assert page.input_value("[data-testid=sql-input]") == Q3_SQL
    assert page.input_value("#window") == str(WINDOW)

    page.fill("[data-testid=sql-input]", REFUSED_SQL)  # a refused query clears the run that was shown
    page.click("[data-testid=explain]")
    error.wait_for(state="visible", timeout=15_000)
    assert refusal in error.text_content()
    for shown in ("strategy", "plan", "stages", "result-table", "chart", "throughput"):
        assert page.text_content(f"[data-testid={shown}]") == "", f"{shown} still shows the last run"
    assert page.text_content("[data-testid=progress]") == "no query loaded"


def _axes(page, chart: str) -> dict[str, str]:
    """A chart's axis titles, the value axis's range left out."""
    titles = page.eval_on_selector_all(f"[data-testid={chart}] .axis-label",
                                       "labels => labels.map(l => [l.dataset.axis, l.textContent])")
    return {axis: text.split(" (0 …")[0].split(" ")[0] if axis == "x" else text for axis, text in titles}


def test_quarantined_rows_show_in_the_error_box_with_their_reason(page, tmp_path):
    row = (1, 7, 7, 10, 99_000)
    stream = write_stream(tmp_path / "stream", orderbook_catalog(),
                          [Update(1, "bids", 1, row), Update(2, "bids", 1, row), Update(3, "bids", -1, row)])
    page.select_option("[data-testid=catalog]", "orderbook")
    page.select_option("[data-testid=stream]", "path")
    page.fill("#path", str(stream))
    page.fill("[data-testid=sql-input]", "select count(*) as n from bids")
    page.click("[data-testid=step]")
    _wait_for_batch(page, 1)
    quarantine = page.locator("[data-testid=error] [data-testid=quarantine]")
    assert quarantine.is_visible()
    assert quarantine.text_content().startswith("1 invalid updates quarantined")
    assert "bids _seq 2" in quarantine.text_content()
    assert _table(page) == [["0"]]  # inserted, the duplicate set aside, deleted
    page.screenshot(path=str(ARTIFACTS / "quarantine.png"))


def test_what_is_typed_before_the_page_is_ready_is_kept(blank_page, server):
    """The page fills its inputs with an example once ``/api/options`` answers; somebody who typed
    before that (here the answer is held back until they did) keeps what they typed."""
    held = []  # the request for /api/options, answered only after the typing
    blank_page.route("**/api/options", lambda route: held.append(route))
    blank_page.goto(server, wait_until="domcontentloaded")
    blank_page.fill("[data-testid=sql-input]", "select count(*) as n from bids")
    blank_page.select_option("[data-testid=catalog]", "orderbook")
    while not held:
        blank_page.wait_for_timeout(50)
    held[0].continue_()
    _wait_until_ready(blank_page)
    assert blank_page.input_value("[data-testid=sql-input]") == "select count(*) as n from bids"
    assert blank_page.input_value("[data-testid=catalog]") == "orderbook"
