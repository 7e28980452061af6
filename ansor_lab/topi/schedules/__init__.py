"""TVM's classic per-target TOPI schedules: ``topi.generic``, ``topi.x86``, ``topi.cuda``.

``generic``, ``x86`` and ``cuda`` (``cuda_nn`` holds its operator schedules) are reached as
``topi.generic`` / ``topi.x86`` / ``topi.cuda``; ``dispatch`` holds the helpers TVM's topi
tests use (``topi.testing.get_injective_schedule(target)``...). A name those namespaces
lack raises MissingOperatorError with what to write instead (``topi.per_target``).

Layering: like the rest of ``topi`` these modules import ``ansor_lab.dsl`` and
``ansor_lab.errors`` at the top; the TE schedule (``ansor_lab.schedule``) and the current
target (``ansor_lab.codegen.target``) are imported inside ``common``'s functions, when a
recipe runs (see its docstring).
"""

from . import cuda, generic, x86

__all__ = ["cuda", "generic", "x86"]
