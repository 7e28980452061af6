"""Suite-wide pytest options: ``--update-golden`` rewrites the golden files under tests/golden/."""

from __future__ import annotations

from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"


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
