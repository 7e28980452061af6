"""The JupyterLab extension's Python side: where the prebuilt bundle lies, the check that
it was built from the sources beside it, and the instruction table it prints traces with.

The extension (``extension/``, TypeScript) is built into ``ansor_lab/labextension`` and
that built bundle is committed, so installing the package never needs node. Its build
writes ``source-digest.json``: the SHA-256 of the sources it was built from, computed by
``source_digest`` (and by ``extension/scripts/digest.mjs`` the same way); a test compares
the two, so a source edited without a rebuild fails. The extension prints a trace stored
in a log with the table ``instruction_table()`` (committed as ``src/kinds.json``).

Wheels and editable installs copy the bundle to ``share/jupyter/labextensions/ansor-lab``
(hatchling shared-data); after rebuilding it, reinstall, or link the checkout's bundle
instead with ``jupyter labextension develop --overwrite .``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: the labextension's name (its folder under share/jupyter/labextensions/)
NAME = "ansor-lab"
#: the built bundle, inside the package
BUNDLE = Path(__file__).resolve().parent.parent / "labextension"
#: the sources whose digest the bundle records, relative to extension/ (folders: every
#: file in them, recursively)
DIGESTED = ("package.json", "tsconfig.json", "src", "style")


def source_digest(extension_dir: str | Path) -> str:
    """SHA-256 over the extension's sources: each file's relative path and bytes, in
    sorted path order (``scripts/digest.mjs`` computes the same)."""
    root = Path(extension_dir)
    files: list[Path] = []
    for entry in DIGESTED:
        path = root / entry
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    h = hashlib.sha256()
    for path in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def bundled_digest(bundle: str | Path = BUNDLE) -> str | None:
    """The digest the committed bundle was built from (None without a bundle)."""
    path = Path(bundle) / "source-digest.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())["sha256"]


def instruction_table() -> dict:
    """Kind -> how its instruction prints (method, varargs, sampling, outputs): what the
    extension needs to print a stored trace as ``def apply_trace(sch): ...``."""
    from ..schedule.instruction_kind import REGISTRY

    return {
        name: {
            "method": decl.method,
            "varargs": decl.varargs,
            "sampling": decl.sampling,
            "outputs": decl.outputs,
        }
        for name, decl in sorted(REGISTRY.items())
    }


def labextension_paths() -> list[dict]:
    """What ``jupyter labextension develop`` links: the bundle, under its name."""
    return [{"src": "labextension", "dest": NAME}]
