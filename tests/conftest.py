"""Suite-wide pytest options: ``--update-golden`` rewrites the golden files under tests/golden/."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"

# The measured bandwidths and peaks (``measure.bandwidth``, the roofline) are cached per
# machine in ~/.cache/ansor_lab, and the prior reads the machine balance from there: with
# a cache left by a bench, the prior's tests saw a memory bound a fresh machine (CI) does
# not have. Each test process gets an empty cache of its own, removed when it exits.
os.environ["ANSOR_LAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="ansor_lab_test_cache_")
atexit.register(shutil.rmtree, os.environ["ANSOR_LAB_CACHE_DIR"], ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/ files from what the code produces now (review the diff!)",
    )


class Golden:
    """Compares text with a file under tests/golden/, or rewrites it with --update-golden."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def path(self, name: str) -> Path:
        """The file ``name`` (a relative path) under tests/golden/."""
        return GOLDEN_DIR / name

    def check(self, name: str, text: str) -> None:
        """Assert that ``text`` equals the golden file ``name`` (written when updating)."""
        path = self.path(name)
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"no golden file {path}; run pytest with --update-golden to write it")
        expected = path.read_text()
        assert text == expected, f"output differs from golden file {path}"


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    """The golden-file checker (``golden.check("dir/name.txt", text)``)."""
    return Golden(request.config.getoption("--update-golden"))


#: the browser's course test runs each notebook in JupyterLab with the same content checks
BROWSER_RUN = "test_course_browser.py::test_notebook_runs_in_jupyterlab["
NBCLIENT_RUN = "test_notebooks.py::test_notebook_runs_and_teaches["


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run each notebook once per session, not twice: where the browser test of a notebook
    is collected (Chromium and Playwright are here), the nbclient run of that notebook is
    deselected, since the browser run applies the same checks (notebook_checks.CHECKS).
    Either one alone is kept (``pytest tests/notebooks`` still executes every notebook)."""
    in_browser = {i.nodeid.split(BROWSER_RUN, 1)[1] for i in items if BROWSER_RUN in i.nodeid}
    if not in_browser:
        return
    dropped = [
        i
        for i in items
        if NBCLIENT_RUN in i.nodeid and i.nodeid.split(NBCLIENT_RUN)[1] in in_browser
    ]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i not in dropped]
