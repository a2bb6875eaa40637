#!/usr/bin/env python3
"""Lists the C++ functions longer than a limit (default 60 lines, from the line of the opening
brace to that of the closing one), outside tests/: `scripts/function_lengths.py [--limit N]
[PATH...]`. Exits 1 when it finds one. A brace-matching reader, not a parser: it skips comments,
string and character literals, and counts a brace block as a function when the text before it
closes a parameter list; lambdas and blocks inside a function count toward that function."""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE_DIRS = ["sim", "gym", "policies", "apps", "adapter", "python", "bench"]
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^()]*$")


def strip(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                         r"'(?:\\.|[^'\\\n])*'", re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(path):
    """(name, first line, lines) of each function defined in `path`."""
    text = strip(path.read_text(encoding="utf-8", errors="replace"))
    stack = []  # kinds of the open blocks: "scope", "function" or "other"
    header_start = 0
    found = []
    for i, c in enumerate(text):
        if c in ";}" and "function" not in stack:
            header_start = i + 1
        if c == "{":
            if "function" in stack:
                stack.append("other")
                continue
            header = text[header_start:i].strip()
            if SCOPE.search(header) or header.endswith("extern \"C\""):
                stack.append("scope")
            elif re.search(r"\)[\w\s:,<>&*()\[\]{}.\-]*$", header) and not header.endswith("="):
                name = re.findall(r"([~\w:]+)\s*\(", header)
                found.append([name[0] if name else "?", text.count("\n", 0, i) + 1, i])
                stack.append("function")
            else:
                stack.append("other")
            header_start = i + 1
        elif c == "}" and stack:
            kind = stack.pop()
            if kind == "function":
                found[-1][2] = text.count("\n", 0, i) + 1 - found[-1][1] + 1
            if kind != "other" or "function" not in stack:
                header_start = i + 1
    return [(name, line, length) for name, line, length in found]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    paths = [pathlib.Path(p) for p in args.paths] or [
        p for d in SOURCE_DIRS for p in sorted((ROOT / d).rglob("*")) if p.suffix in (".cpp", ".h")]
    long = []
    for path in paths:
        for name, line, length in functions(path):
            if length > args.limit:
                long.append((length, f"{path.relative_to(ROOT) if path.is_absolute() else path}:"
                                     f"{line}: {name} ({length} lines)"))
    for _, text in sorted(long, reverse=True):
        print(text)
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main())
