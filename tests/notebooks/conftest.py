"""Shared fixtures of the notebook tests: a kernelspec of this test's own Python."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import ansor_lab


@pytest.fixture(scope="module")
def kernel_name(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernelspec running ``sys.executable`` that sees the same ansor_lab as these tests."""
    kernelspec = pytest.importorskip("ipykernel.kernelspec")
    name = f"ansor-lab-test-{os.getpid()}"
    prefix = tmp_path_factory.mktemp("jupyter")
    kernelspec.install(kernel_name=name, display_name=name, prefix=str(prefix))
    package_root = str(Path(ansor_lab.__file__).resolve().parents[1])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
        mp.setenv(
            "PYTHONPATH",
            os.pathsep.join([package_root, *filter(None, [os.environ.get("PYTHONPATH")])]),
        )
        mp.setenv("OMP_NUM_THREADS", "1")  # tests run two at a time on small machines
        yield name
