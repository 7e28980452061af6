"""Run one notebook with nbclient, save the executed copy: ``python binder_run.py IN OUT``.

Started by test_binder.py with the Binder venv's Python under ``taskset -c 0``; the kernel
is that Python too (jupyter_client's native ``python3`` kernel is ``sys.executable``).
Exit status 0 when every cell ran without an error output.
"""

import sys
from pathlib import Path

import nbclient
import nbformat


def main(src: str, dst: str) -> int:
    nb = nbformat.read(src, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=600,
        allow_errors=False,
        resources={"metadata": {"path": str(Path(src).parent)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        print(str(err)[-3000:], file=sys.stderr)
        return 1
    finally:
        nbformat.write(nb, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
