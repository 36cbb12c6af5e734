"""The reproduced results: run folders kept under results/, and docs/reproduced.md made from them.

    .venv/bin/python scripts/results_page.py collect RUN_DIR...   # keep these runs' manifests and records
    .venv/bin/python scripts/results_page.py                      # write docs/reproduced.md from results/
    .venv/bin/python scripts/results_page.py --check              # fail when docs/reproduced.md is not current

``make reproduce`` runs every shipped experiment at full size; ``collect`` keeps each run's
manifest and its records (gzip-compressed, byte-for-byte reproducible) in
``results/<experiment>/``. The page puts every table each experiment's report computes,
with the paper's figures beside ours, under the command that made it, so a reader sees the
numbers without running anything; tests/test_docs.py fails when the page and the kept
records disagree.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gencoord.eval.report import write_report  # noqa: E402 - the script documents the package it sits in
from gencoord.eval.runner import MANIFEST, RECORDS, read_manifest, read_records, unique_records  # noqa: E402
from gencoord.eval.tables import paper_figures  # noqa: E402

RESULTS = ROOT / "results"
PAGE = ROOT / "docs" / "reproduced.md"
KEPT = RECORDS + ".gz"

HEADER = """# Reproduced results

Every table below is computed from the records kept in `results/<experiment>/` (its run's
`manifest.json` and `episodes.jsonl.gz`) by the same code as that run's report, with the
paper's figure beside ours where the paper reports one. A paper figure is printed for
comparison and never used in a computation; where our row is computed differently, the
table says so under it. To make them yourself: `make reproduce` (every experiment at full
size on the embedded simulator), then `.venv/bin/python scripts/results_page.py collect
runs/*` and `.venv/bin/python scripts/results_page.py`. This page is generated; CI fails when
it and the kept records disagree.
"""


def collect(run_dirs: list[Path]) -> None:
    """Keep each run's manifest and records under results/<experiment>/, replacing an older run of it."""
    for run_dir in run_dirs:
        config, _ = read_manifest(run_dir)
        target = RESULTS / config.name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        shutil.copyfile(run_dir / MANIFEST, target / MANIFEST)
        data = (run_dir / RECORDS).read_bytes()
        (target / KEPT).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        print(f"{run_dir} → {target}")


def _section(kept: Path) -> str:
    """One experiment's tables, as its report computes them from the kept records."""
    with tempfile.TemporaryDirectory(prefix="gencoord-results-") as folder:
        run_dir = Path(folder)
        shutil.copyfile(kept / MANIFEST, run_dir / MANIFEST)
        (run_dir / RECORDS).write_bytes(gzip.decompress((kept / KEPT).read_bytes()))
        config, manifest = read_manifest(run_dir)
        records, _ = unique_records(read_records(run_dir))
        report = write_report(run_dir)  # the tables exactly as the run's own report shows them
    source = paper_figures().get(config.kind, {}).get("source")
    lines = [
        f"## {config.name}",
        "",
        f"`gencoord run {config.name}` · kind `{config.kind}` · {len(records)} of {manifest['episodes']} episodes · "
        f"gencoord {manifest['gencoord']} · config `{str(manifest.get('config_sha256', ''))[:12]}`",
        "",
        config.summary(),
        "",
        *([f"Paper figures from {source}.", ""] if source else []),
    ]
    return "\n".join(lines + [table.markdown(level=3) + "\n" for table in report.all_tables])


def page() -> str:
    """The page, computed in the repository root: configs name their task files relative to it, as ``make`` ran them."""
    kept = sorted(path for path in RESULTS.iterdir() if (path / MANIFEST).exists()) if RESULTS.exists() else []
    if not kept:
        return HEADER + "\nNo results are kept yet.\n"
    with contextlib.chdir(ROOT):
        return HEADER + "\n" + "\n".join(_section(path) for path in kept)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["collect"], help="keep run folders under results/")
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="fail when docs/reproduced.md is not current")
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.runs)
    text = page()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print("docs/reproduced.md is stale: run .venv/bin/python scripts/results_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"→ {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
