"""Binder, checked: the course runs from binder/'s files alone, on one core, in 2 GB.

A fresh venv is built from ``binder/`` only (``requirements.txt``, then ``postBuild`` from
the repository root, as repo2docker does), with runtime.txt's Python when this machine has
it (else the current one; the test prints which). pip's cache is used for the
requirements, so a second build costs seconds. Every notebook then runs in that venv under
``taskset -c 0`` (one core), its content is checked as test_notebooks.py checks it, and
the test prints a table: notebook, seconds on one core, wall seconds, peak MB.

Time: "seconds on one core" is the CPU time (user + system) of the notebook's whole process
tree (``getrusage(RUSAGE_CHILDREN)``, which counts the kernel and the tuner's workers once
they are reaped): what the notebook costs a dedicated core, as on Binder. Wall time is
printed next to it but not judged: on a shared CI host pinned to one core it includes
other jobs' time (a notebook is still killed past 4 minutes of wall time).

Memory: an address-space cap (``prlimit --as`` / RLIMIT_AS in a preexec_fn) is the wrong
measure: it counts reserved, not used, memory (here a process that imported numpy,
llvmlite, scikit-learn and plotly, built one kernel and ran a BLAS matmul had 580 MB of
address space for 218 MB resident, and thread pools reserve more per core), and it applies
to each process alone, while a notebook is a tree of them (the kernel and the tuner's
measurement workers). Binder's limit is on resident memory of the container (a cgroup),
and this machine's cgroups are not ours to create. So the test samples the resident set
size (RSS) of the whole process tree (the runner, the kernel, the tuner's measurement
workers, summed) every 50 ms from /proc, kills the tree and fails when it passes 2 GB,
and reports the peak; ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (the largest single
process) is printed next to it as a cross-check.

The venv is built once per session in ``$ANSOR_LAB_BINDER_VENV`` when set (kept, and
reused when it is already there), else in a temp dir. Skipped when no network or no
``taskset``. Executed notebooks and the table go to the artifacts dir.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from notebook_checks import CHECKS, text_of

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LIMIT_S = 120.0
LIMIT_BYTES = 2 << 30
PAGE = os.sysconf("SC_PAGE_SIZE")

pytestmark = pytest.mark.slow


def artifact_dir() -> Path:
    """$ANSOR_LAB_ARTIFACTS, else a fixed folder under the temp dir."""
    chosen = os.environ.get("ANSOR_LAB_ARTIFACTS")
    out = Path(chosen) if chosen else Path(tempfile.gettempdir()) / "ansor_lab_artifacts"
    out.mkdir(parents=True, exist_ok=True)
    return out


def runtime_python() -> tuple[str, str]:
    """(interpreter, why): runtime.txt's python-X.Y when on PATH, else this one."""
    wanted = (
        (BINDER / "runtime.txt").read_text().strip() if (BINDER / "runtime.txt").exists() else ""
    )
    m = re.fullmatch(r"python-(\d+\.\d+)", wanted)
    if m:
        exe = shutil.which(f"python{m.group(1)}")
        if exe:
            return exe, f"runtime.txt asks for {wanted}: using {exe}"
        return (
            sys.executable,
            f"runtime.txt asks for {wanted}, not on this machine: using {sys.executable}",
        )
    return sys.executable, f"no runtime.txt: using {sys.executable}"


def build_venv(venv: Path) -> Path:
    """The Binder environment: requirements.txt, then postBuild from the repo root."""
    python = venv / "bin" / "python"
    marker = venv / ".binder-built"
    if marker.exists():
        return python
    exe, why = runtime_python()
    print(why)
    subprocess.run([exe, "-m", "venv", "--clear", str(venv)], check=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # the venv must find ansor_lab through its own install
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["VIRTUAL_ENV"] = str(venv)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "-r", str(BINDER / "requirements.txt")], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        if "Could not find a version" in done.stderr or "NewConnectionError" in done.stderr:
            pytest.skip(f"no package index reachable: {done.stderr[-500:]}")
        raise AssertionError(f"pip install -r binder/requirements.txt failed:\n{done.stderr}")
    post = BINDER / "postBuild"
    done = subprocess.run(["bash", str(post)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"binder/postBuild failed:\n{done.stdout}\n{done.stderr}"
    marker.write_text(why)
    return python


@pytest.fixture(scope="session")
def binder_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("taskset") is None:
        pytest.skip("taskset is missing (util-linux)")
    chosen = os.environ.get("ANSOR_LAB_BINDER_VENV")
    venv = Path(chosen) if chosen else tmp_path_factory.mktemp("binder") / "venv"
    start = time.monotonic()
    python = build_venv(venv)
    print(f"binder venv ready in {time.monotonic() - start:.0f} s: {venv}")
    return python


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants, summed."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
        todo += children.get(pid, [])
    return total


def run_limited(cmd: list[str], env: dict) -> tuple[int, float, int, str]:
    """(exit status, seconds, peak tree RSS bytes, stderr tail); the tree is killed past
    LIMIT_BYTES or twice LIMIT_S."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    peak = [0]
    over = [False]

    def sample() -> None:
        while proc.poll() is None:
            rss = tree_rss(proc.pid)
            peak[0] = max(peak[0], rss)
            if rss > LIMIT_BYTES or time.monotonic() - start > 2 * LIMIT_S:
                over[0] = True
                os.killpg(proc.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    sampler.join()
    return proc.returncode, time.monotonic() - start, peak[0], err[-3000:]


def test_every_notebook_runs_in_binder_limits(binder_python: Path) -> None:
    out = artifact_dir() / "binder"
    out.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("JUPYTER_PATH", None)
    env["PATH"] = f"{binder_python.parent}{os.pathsep}{env['PATH']}"
    env["ANSOR_LAB_CACHE_DIR"] = str(out / "cache")  # a fresh container: nothing cached
    runner = str(Path(__file__).with_name("binder_run.py"))
    rows, failures = [], []
    for nb in NOTEBOOKS:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = ["taskset", "-c", "0", str(binder_python), runner, str(nb), str(out / nb.name)]
        code, wall, peak, err = run_limited(cmd, env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rows.append((nb.name, cpu, wall, peak / 2**20))
        if code != 0:
            failures.append(f"{nb.name}: exit {code}\n{err}")
        else:  # what the notebook teaches, read from the copy executed in the Binder venv
            try:
                check = CHECKS.get(nb.name, lambda _: None)
                check(text_of(nbformat.read(out / nb.name, as_version=4)))
            except AssertionError as e:
                failures.append(f"{nb.name}: content check failed in the Binder venv: {e}")
        if cpu > LIMIT_S:
            failures.append(f"{nb.name}: {cpu:.0f} s of one core, over {LIMIT_S:.0f} s")
        if peak > LIMIT_BYTES:
            failures.append(f"{nb.name}: peak {peak / 2**20:.0f} MB, over 2048 MB")
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    lines = [f"{'notebook':34s} {'s (1 core)':>10s} {'wall s':>7s} {'peak MB':>8s}"]
    for name, cpu, wall, mb in rows:
        lines.append(f"{name:34s} {cpu:10.1f} {wall:7.1f} {mb:8.0f}")
    lines.append(f"largest single process (getrusage ru_maxrss): {largest:.0f} MB")
    table = "\n".join(lines)
    print("\n" + table)
    (out / "binder_table.txt").write_text(table + "\n")
    assert not failures, "\n".join(failures)
