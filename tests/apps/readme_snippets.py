"""Runs the snippets of README.md and docs/*.md marked runnable against a build, as a user would
type them.

usage: readme_snippets.py SOURCE_DIR BUILD_DIR

A snippet is runnable when the line before its fence is `<!-- readme-test -->`. The snippets run
in order, README.md's first, then each docs/*.md page's by page name, in one scratch directory
that mirrors the source tree (each top-level entry a symbolic link) with `build` pointing at
BUILD_DIR, so that a later snippet sees what an earlier one wrote: ```sh snippets under
`bash -euo pipefail`, ```python ones under this interpreter.
Exit status 0 when all pass, 1 when one fails or none is marked, 77 (skipped) when the others
pass but a python snippet could not run because this interpreter lacks torch.
"""
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

MARKER = "<!-- readme-test -->"
TIMEOUT_S = 120


def snippets(name, text):
    """(where, language, code) of every marked snippet of page `name`, in order."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        fence = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not fence.startswith("```") or fence[3:] not in ("sh", "python"):
            raise SystemExit(f"{name}:{i + 1}: {MARKER} must precede a ```sh or ```python fence")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise SystemExit(f"{name}:{i + 2}: the snippet's fence is never closed")
        found.append((f"{name}:{i + 3}", fence[3:], "\n".join(lines[i + 2:end]) + "\n"))
    return found


def mirror(source, build, scratch):
    for entry in source.iterdir():
        if entry.name.startswith(".") or entry.name.startswith("build") or entry.name == "runs":
            continue
        (scratch / entry.name).symlink_to(entry)
    (scratch / "build").symlink_to(build)


def main():
    source, build = (pathlib.Path(p).resolve() for p in sys.argv[1:3])
    pages = [source / "README.md"] + sorted((source / "docs").glob("*.md"))
    found = [snippet for page in pages
             for snippet in snippets(str(page.relative_to(source)), page.read_text())]
    if not any(where.startswith("README.md:") for where, _, _ in found):
        print("README.md marks no snippet runnable")
        return 1
    with tempfile.TemporaryDirectory(prefix="dynamix-readme-") as scratch_dir:
        scratch = pathlib.Path(scratch_dir)
        mirror(source, build, scratch)
        skipped = 0
        for where, language, code in found:
            if language == "python" and importlib.util.find_spec("torch") is None:
                print(f"{where}: skipped, {sys.executable} cannot import torch")
                skipped += 1
                continue
            command = (["bash", "-euo", "pipefail", "-c", code] if language == "sh"
                       else [sys.executable, "-c", code])
            print(f"{where}: running the {language} snippet", flush=True)
            result = subprocess.run(command, cwd=scratch, timeout=TIMEOUT_S,
                                    env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            if result.returncode != 0:
                print(f"{where}: the {language} snippet exited {result.returncode}")
                return 1
    print(f"{len(found) - skipped} snippets ran, {skipped} skipped")
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
