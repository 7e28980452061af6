"""``ms.Database``: the tuning records of a ``tune_tir`` work directory.

The records are our JSON-lines log (``work_dir/database_tuning_record.json``, written by
``auto_scheduler.RecordToFile``), so the notebook widgets, ``ansor-lab show`` and the
JupyterLab log viewer read a MetaSchedule run like any other tuning log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from ..errors import AnsorLabError, TaskError
from ..measure.records import load_best_record, load_records
from ..schedule.trace import Trace

#: the records file in a work directory (TVM's JSONDatabase uses the same name)
RECORDS_FILE = "database_tuning_record.json"


@dataclass(frozen=True)
class TuningRecord:
    """One measured candidate: its trace, run times (seconds) and workload key."""

    trace: Trace
    run_secs: tuple
    workload_key: str
    error: str = ""


class Database:
    """Records of tuned programs, queried by module (``query_schedule``)."""

    def __init__(self, path_tuning_record: str) -> None:
        self.path = str(path_tuning_record)

    @staticmethod
    def in_work_dir(work_dir: str) -> Database:
        """The database of a ``tune_tir`` work directory."""
        return JSONDatabase(work_dir=work_dir)

    def get_all_tuning_records(self) -> list[TuningRecord]:
        """Every record, in the order measured."""
        out = []
        for inp, res in load_records(self.path):
            out.append(
                TuningRecord(
                    Trace.from_json(inp.trace),
                    tuple(res.costs) if res.error_no == 0 else (),
                    inp.workload_key,
                    res.error_msg if res.error_no else "",
                )
            )
        return out

    def __len__(self) -> int:
        return len(self.get_all_tuning_records())

    def get_top_k(self, workload: Any = None, top_k: int = 1) -> list[TuningRecord]:
        """The ``top_k`` fastest valid records (of one workload key when given)."""
        key = getattr(workload, "workload_key", workload)
        recs = [
            r
            for r in self.get_all_tuning_records()
            if r.run_secs and (key is None or r.workload_key == key)
        ]
        return sorted(recs, key=lambda r: sum(r.run_secs) / len(r.run_secs))[:top_k]

    def query_schedule(self, mod: Any, target: Any = None, workload_name: str = "main") -> Any:
        """The best program of ``mod`` as a tir.Schedule, or None if it has no record."""
        from .tune import task_of  # noqa: PLC0415 - tune imports this module

        task = task_of(mod, target, workload_name)
        try:
            sch, _ = task.apply_best(self.path)
        except (AnsorLabError, OSError, ValueError):  # no record that applies: None, as TVM
            return None
        return sch

    def query_tuning_record(
        self, mod: Any, target: Any = None, workload_name: str = "main"
    ) -> TuningRecord | None:
        """The best record of ``mod`` (or None)."""
        from .tune import task_of  # noqa: PLC0415 - tune imports this module

        task = task_of(mod, target, workload_name)
        try:
            inp, res = load_best_record(self.path, task)
        except Exception:  # noqa: BLE001 - "no record" in any form is None, as in TVM
            return None
        return TuningRecord(Trace.from_json(inp.trace), tuple(res.costs), inp.workload_key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r})"


class JSONDatabase(Database):
    """``ms.database.JSONDatabase(work_dir=...)`` or ``(path_tuning_record=...)``."""

    def __init__(
        self,
        path_workload: str | None = None,
        path_tuning_record: str | None = None,
        *,
        work_dir: str | None = None,
        allow_missing: bool = True,
        module_equality: str = "structural",
    ) -> None:
        if path_tuning_record is None:
            if work_dir is None:
                raise TaskError("JSONDatabase needs work_dir= or path_tuning_record=")
            os.makedirs(work_dir, exist_ok=True)
            path_tuning_record = os.path.join(work_dir, RECORDS_FILE)
        if not allow_missing and not os.path.exists(path_tuning_record):
            raise TaskError(f"no tuning records at {path_tuning_record!r}")
        super().__init__(path_tuning_record)
