"""The ``ansor-lab`` command for scripts and CI.

``info`` and ``demo`` (machine.py); ``tune`` (tune.py); ``show``, ``distill``, ``merge``
(logs.py); ``export`` and ``replay`` (program.py). Exit status: 0 success, 1 a failure
(a check mismatch, no working program), 2 a wrong use or a bad input file. Results go to
stdout (``--json`` for scripts), progress and warnings to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from .. import __version__
from ..errors import AnsorLabError
from . import logs, program, tune
from .machine import cmd_demo, cmd_info, cpu_feature_summary, find_nvcc, time_numpy

__all__ = ["cpu_feature_summary", "find_nvcc", "main", "make_parser", "time_numpy"]


def make_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ansor-lab``."""
    parser = argparse.ArgumentParser(
        prog="ansor-lab", description="ansor_lab: tensor-program scheduling in Jupyter."
    )
    parser.add_argument("--version", action="version", version=f"ansor_lab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="version, target, CPU features, cores, CUDA")
    p_info.set_defaults(func=cmd_info)
    p_demo = sub.add_parser("demo", help="build, check and time the matmul + exp example")
    p_demo.add_argument("--size", "-n", type=int, default=256, help="matrix size (default 256)")
    p_demo.add_argument("--number", type=int, default=5, help="runs per measurement")
    p_demo.add_argument("--repeat", type=int, default=3, help="measurements (median taken)")
    p_demo.set_defaults(func=cmd_demo)
    tune.add_parser(sub)
    logs.add_parsers(sub)
    program.add_parsers(sub)
    return parser


def _warning_line(message, category, filename, lineno, line=None) -> str:  # noqa: ANN001
    return f"ansor-lab: warning: {message}\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ansor-lab`` console script."""
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "size", 1) < 1:
        parser.error("--size must be at least 1")
    warnings.formatwarning = _warning_line
    try:
        return args.func(args)
    except AnsorLabError as err:  # a wrong use or a bad input: said plainly, exit 2
        print(f"ansor-lab {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `ansor-lab info | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
