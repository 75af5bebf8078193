"""Sweeps a user can trust with hours of work: every finished task is written to the results directory at
once, an interrupted sweep loses only the tasks in flight, `resume` runs only what is missing, and the
same tasks run on local processes or on a Dask distributed cluster with the same results.

A task is any picklable object with a `key` (its file name), a `cost` (longest first) and a `run()`
returning a JSON-able dict that includes the key."""

from __future__ import annotations

import csv
import json
import os
import sys
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from ..errors import InputError
from ..machine.simulation import load_kernel
from ..output import replacing, write_text

DASK_CONNECT_SECONDS = 5


def execute(task) -> dict:
    """Run one task (the function local processes and Dask workers are given)."""
    return task.run()


def _path(results: Path, key: str) -> Path:
    return results / "points" / f"{key}.json"


def load_result(results: Path, key: str) -> dict | None:
    path = _path(results, key)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None  # a file cut short by a crash is simply run again


def _save(results: Path, result: dict) -> None:
    path = _path(results, result["key"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(result, indent=1))  # whole or not at all: a reader never sees half a file


def write_csv(rows: list[dict], path: Path) -> None:
    """One CSV row per dict, columns in the first dict's order."""
    with replacing(path) as temporary, temporary.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def markdown_table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """A Markdown table of the rows: (key, title) per column, floats to 3 significant digits."""
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[k]:.3g}" if isinstance(r[k], float) else str(r[k]) for k, _ in columns)
                     + " |")
    return "\n".join(lines) + "\n"


def run_tasks(tasks: list, results: Path, resume: bool = False, workers: int | None = None,
              dask_scheduler: str | None = None, progress: bool = True, description: str = "points") -> dict:
    """Run every task not already finished (with `resume`), saving each result as it completes.
    Returns {key: result} for all tasks."""
    tasks = list({t.key: t for t in tasks}.values())
    done = {}
    if resume:
        for task in tasks:
            result = load_result(results, task.key)
            if result is not None:
                done[task.key] = result
    todo = [t for t in tasks if t.key not in done]
    client = _dask_client(dask_scheduler) if todo and dask_scheduler else None
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(tasks), initial=len(done), desc=description, unit="point", file=sys.stderr,
                   dynamic_ncols=True)

    def finished(result: dict) -> None:
        _save(results, result)
        done[result["key"]] = result
        if bar is not None:
            bar.update(1)

    try:
        if client is not None:
            _run_on_dask(todo, client, finished)
        elif todo:
            _run_locally(todo, workers or os.cpu_count() or 1, finished)
    finally:
        if bar is not None:
            bar.close()
        if client is not None:
            client.close()
    return done


def _run_locally(todo: list, workers: int, finished) -> None:
    load_kernel()  # once here, so that forked workers inherit it instead of each loading or compiling it
    if workers == 1:
        for task in todo:
            finished(execute(task))
        return
    # Expensive tasks first, so the last ones to finish are short.
    todo = sorted(todo, key=lambda task: task.cost, reverse=True)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = {pool.submit(execute, task) for task in todo}
        try:
            while pending:
                complete, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in complete:
                    finished(future.result())
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def _dask_client(address: str):
    """A client of the scheduler at `address`, or an InputError within DASK_CONNECT_SECONDS."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError("--dask-scheduler needs dask.distributed, which is not installed "
                         "(pip install -e '.[dask]')") from None
    try:
        return Client(address, timeout=DASK_CONNECT_SECONDS)
    except Exception as exc:  # no answer, not an address, not a Dask scheduler: whatever it is, a bad address
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"--dask-scheduler: cannot connect to a Dask scheduler at {address!r} ({reason})") from None


def _run_on_dask(todo: list, client, finished) -> None:
    from dask.distributed import as_completed
    futures = client.map(execute, sorted(todo, key=lambda task: task.cost, reverse=True), pure=False)
    for future in as_completed(futures):
        finished(future.result())
