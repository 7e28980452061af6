"""TVM and MLC tutorial code runs after the import swap (``import tvm`` -> ansor_lab).

Each script in ``scripts/`` is tutorial code as written for TVM; the test swaps its imports
textually (what a user does) and runs it in a fresh Python. A tutorial that needs a GPU
must get through every step that does not and stop at the first one that does with our
GPUUnavailableError (where a GPU and pycuda exist, it must run to the end).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ansor_lab.runtime.cuda_support import cuda_available

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.py"))
#: tutorials whose last part needs a GPU
NEEDS_GPU = {"blitz_tensorir.py", "mlc_gpu_acceleration.py", "reduction.py"}


def swap_imports(source: str) -> str:
    """``import tvm`` -> ``import ansor_lab as tvm``; ``from tvm.x import y`` -> ansor_lab."""
    source = re.sub(r"^import tvm$", "import ansor_lab as tvm", source, flags=re.M)
    source = re.sub(r"^import tvm\.([\w.]+)$", r"import ansor_lab.\1", source, flags=re.M)
    source = re.sub(r"^from tvm(\.[\w.]+)? import", r"from ansor_lab\1 import", source, flags=re.M)
    return source


def test_the_swap_covers_every_import_form():
    text = "import tvm\nfrom tvm import te\nfrom tvm.script import tir as T\nimport tvm.testing\n"
    assert swap_imports(text) == (
        "import ansor_lab as tvm\nfrom ansor_lab import te\n"
        "from ansor_lab.script import tir as T\nimport ansor_lab.testing\n"
    )


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_tutorial_runs_after_the_import_swap(script: Path, tmp_path: Path):
    code = swap_imports(script.read_text())
    assert "import tvm" not in code and "from tvm" not in code
    path = tmp_path / script.name
    path.write_text(code)
    proc = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    if script.name in NEEDS_GPU and not cuda_available():
        assert proc.returncode != 0, "a GPU step ran without a GPU"
        last = proc.stderr.strip().splitlines()[-1]
        assert "GPUUnavailableError" in last, proc.stderr[-3000:]
        assert "EmulatedRunner" in proc.stderr or "emulate" in proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr[-3000:]
