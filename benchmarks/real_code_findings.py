"""Lint snapshots of public repositories and compare the findings of two versions of msprobe-lint.

A rule change is checked against real code, not only the fixtures: record the findings before the change,
make it, record them again, and read every finding that appeared or went away.

    python benchmarks/real_code_findings.py record before.json /work/.mirror/*/repo
    ... change a rule ...
    python benchmarks/real_code_findings.py record after.json /work/.mirror/*/repo
    python benchmarks/real_code_findings.py diff before.json after.json

A corpus is a folder, or a bare git directory (as the `fetch` tool leaves them: `.../owner+name/repo`),
whose HEAD (its Python files and project settings) is extracted once under --work (default /tmp/real-code) and linted there.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# Only what lint reads: large files of a snapshot may be absent, so the whole tree cannot always be extracted.
_LINTED_SUFFIXES = (".py", ".toml", ".cfg", ".gitignore")


def corpus_folder(source: Path, work: Path) -> tuple[str, Path]:
    """Return the corpus's name and a folder holding its files (a bare git dir is extracted once)."""
    if not (source / "HEAD").is_file():
        return source.name, source
    name = source.parent.name if source.name == "repo" else source.name
    folder = work / name
    if not folder.is_dir():
        partial = folder.with_name(name + ".part")
        partial.mkdir(parents=True)
        listing = subprocess.run(
            ["git", "--git-dir", str(source), "ls-tree", "-r", "-z", "--name-only", "HEAD"],
            check=True, capture_output=True, text=True,
        )
        linted = [path for path in listing.stdout.split("\0") if path.endswith(_LINTED_SUFFIXES)]
        archive = subprocess.run(
            ["git", "--git-dir", str(source), "archive", "HEAD", "--", *linted], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(partial)], input=archive.stdout, check=True)
        partial.rename(folder)
    return name, folder


def lint(folder: Path) -> list[dict]:
    """Run msprobe-lint (JSON, no cache) on a folder; return its findings with paths relative to it."""
    done = subprocess.run(
        ["msprobe-lint", "--format", "json", "--no-cache", "--exit-zero", "."],
        cwd=folder, capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"msprobe-lint failed on {folder}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)["findings"]


def record(out: Path, sources: list[Path], work: Path) -> None:
    """Write {corpus: [finding, ...]} for every source to `out`."""
    findings = {}
    for source in sources:
        name, folder = corpus_folder(source, work)
        findings[name] = [
            {key: finding[key] for key in ("path", "line", "code", "severity", "message")} for finding in lint(folder)
        ]
        print(f"{name}: {len(findings[name])} findings", file=sys.stderr)
    out.write_text(json.dumps(findings, indent=1, sort_keys=True))


def diff(before: Path, after: Path) -> int:
    """Print the findings only one of two records has, over the corpora both recorded; return how many."""
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    for name in sorted(set(old) ^ set(new)):
        print(f"(only in {'the first' if name in old else 'the second'} record: {name})", file=sys.stderr)
    changed = 0
    for name in sorted(set(old) & set(new)):
        keys_old = {_key(finding) for finding in old.get(name, [])}
        keys_new = {_key(finding) for finding in new.get(name, [])}
        for sign, keys in (("-", sorted(keys_old - keys_new)), ("+", sorted(keys_new - keys_old))):
            for path, line, code, severity, message in keys:
                print(f"{sign} {name}/{path}:{line} {code} [{severity}] {message}")
                changed += 1
    print(f"{changed} findings changed", file=sys.stderr)
    return changed


def _key(finding: dict) -> tuple:
    return finding["path"], finding["line"], finding["code"], finding["severity"], finding["message"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    recording = commands.add_parser("record", help="lint the corpora and write their findings")
    recording.add_argument("out", type=Path)
    recording.add_argument("sources", type=Path, nargs="+")
    recording.add_argument("--work", type=Path, default=Path("/tmp/real-code"))
    diffing = commands.add_parser("diff", help="print the findings that differ between two records")
    diffing.add_argument("before", type=Path)
    diffing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.sources, args.work)
    else:
        diff(args.before, args.after)


if __name__ == "__main__":
    main()
