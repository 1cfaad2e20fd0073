"""Run every benchmark and write benchmarks/results.md and results.json.

Each ``benchmarks/bench_*.py`` defines ``run() -> list[dict]``; a row has the keys
``name`` (what is computed), ``statmech_s`` (seconds after warm-up), ``baseline_s``
(the straightforward scipy quad + fsolve / minimize implementation a user would
write, at equal accuracy), ``ratio`` (baseline_s / statmech_s), ``rel_diff``
(relative difference of the two results) and optional ``notes``.

The table is also written into README.md between the BENCHMARKS markers.

Usage: ``python benchmarks/run.py [--only NAME ...]`` (with --only, the other groups' rows are kept
from the previous results.json).
"""
from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from statmech.io import atomic_write_json, atomic_write_text  # noqa: E402


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fmt(x, spec):
    return "" if x is None else format(x, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="benchmark file stems (e.g. bench_perceptron)")
    args = ap.parse_args(argv)
    rows = []
    load0, t_start = os.getloadavg()[0], time.perf_counter()
    for path in sorted(HERE.glob("bench_*.py")):
        if args.only and path.stem not in args.only:
            continue
        t0 = time.perf_counter()
        for row in load(path).run():
            row.setdefault("group", path.stem.removeprefix("bench_"))
            rows.append(row)
            print(f"{row['group']:>14} | {row['name']:<55} | {fmt(row.get('ratio'), '9.1f')}x", flush=True)
        print(f"  ({path.name}: {time.perf_counter() - t0:.1f} s)", flush=True)
    if args.only and (HERE / "results.json").exists():
        # keep the rows of the groups that were not re-run
        done = {r["group"] for r in rows}
        old = json.loads((HERE / "results.json").read_text())["rows"]
        rows = [r for r in old if r["group"] not in done] + rows
        rows.sort(key=lambda r: r["group"])
    from statmech.io import environment
    env = environment()
    meta = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "date": datetime.date.today().isoformat(), "load_average_at_start": round(load0, 2),
            "seconds": round(time.perf_counter() - t_start, 1), "only": args.only or None,
            "environment": env}
    atomic_write_json(HERE / "results.json", {"meta": meta, "rows": rows})
    lines = ["| group | computation | statmech (ms) | scipy baseline (ms) | speed-up | rel. difference | notes |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['group']} | {r['name']} | {fmt(1e3 * r['statmech_s'], '.3g')} | "
                     f"{fmt(None if r.get('baseline_s') is None else 1e3 * r['baseline_s'], '.3g')} | "
                     f"{fmt(r.get('ratio'), '.0f')}{'x' if r.get('ratio') else ''} | {fmt(r.get('rel_diff'), '.1e')} | {r.get('notes', '')} |")
    v = env["versions"]
    caption = (f"*Measured by `python benchmarks/run.py` on {meta['date']}: {meta['cpus']} cores ({env['cpu']}), "
               f"Python {meta['python']}, statmech {v['statmech']}, numpy {v['numpy']}, scipy {v['scipy']}, "
               f"numba {v['numba']}; load average {meta['load_average_at_start']} at the start; "
               f"the run took {meta['seconds']:.0f} s"
               + (f" (groups re-run: {', '.join(args.only)})" if args.only else "") + ".*\n\n")
    table = caption + "\n".join(lines) + "\n"
    atomic_write_text(HERE / "results.md", table)
    update_readme(table)
    print(table)


def update_readme(table):
    """Replace the block between the BENCHMARKS markers of README.md with ``table``."""
    readme = HERE.parent / "README.md"
    if not readme.exists():
        return
    text = readme.read_text()
    start, end = "<!-- BENCHMARKS -->", "<!-- /BENCHMARKS -->"
    if start not in text:
        return
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1] if end in rest else rest
    atomic_write_text(readme, f"{head}{start}\n{table}{end}{tail}")


if __name__ == "__main__":
    main()
