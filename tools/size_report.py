#!/usr/bin/env python3
"""Non-blank lines of tracked sources per area, product files over 600 lines,
functions over 120 lines (device kernels 200): docs/architecture.md's limits.

  python3 tools/size_report.py [--root DIR] [--check]   (--check: exit 1 past a limit)

Functions are found by braces in clang-formatted code, not by a C++ parser.
"""
import argparse
import os
import re
import subprocess
import sys

AREAS = ("suite", "kernels", "reports", "tools", "core", "lab", "tests")
SOURCE = re.compile(r"\.(cpp|cu|h|cuh|hpp|cc|sh|py|js)$")
FILE_LIMIT, FUNC_LIMIT, KERNEL_LIMIT = 600, 120, 200
LIMITS = {"product_lines": 26000, "lab_lines": 3000}
SIGNATURE = re.compile(r"^[A-Za-z_].*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>]+)?\s*\{\s*$")
OPENERS = re.compile(r"^(namespace\b|extern\s+\"C\"|struct\b|class\b|enum\b|union\b)")


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return [f for f in out if f and SOURCE.search(f)]


def functions(lines):
    """(first line, length, name, is_kernel) of each top-level function body."""
    found, depth, start, name, kernel, scope = [], 0, None, "", False, []
    for i, raw in enumerate(lines):
        line = raw.split("//")[0].rstrip()
        if start is None and SIGNATURE.match(line.strip()) and depth == len(scope) and \
                not OPENERS.match(line.strip()):
            start, name = i, line.strip()[:60]
            kernel = "__global__" in line or (i > 0 and "__global__" in lines[i - 1])
        elif start is None and OPENERS.match(line.strip()) and line.endswith("{"):
            scope.append(depth)
        depth += line.count("{") - line.count("}")
        if start is not None and depth == len(scope):
            found.append((start + 1, i - start + 1, name, kernel))
            start = None
        while scope and depth <= scope[-1]:
            scope.pop()
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    lines_by_area, big_files, long_funcs = {x: 0 for x in AREAS}, [], []
    for f in tracked(a.root):
        area = f.split("/")[0]
        if area not in lines_by_area:
            continue
        with open(os.path.join(a.root, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read().split("\n")
        n = sum(1 for s in text if s.strip())
        lines_by_area[area] += n
        if area in ("tests", "lab"):
            continue
        if len(text) > FILE_LIMIT:
            big_files.append((len(text), f))
        if f.endswith((".cpp", ".cu", ".h", ".cuh", ".cc")):
            for first, length, name, kernel in functions(text):
                if length > (KERNEL_LIMIT if kernel else FUNC_LIMIT):
                    long_funcs.append((length, f"{f}:{first}", name))
    product = sum(v for k, v in lines_by_area.items() if k not in ("tests", "lab"))
    print("non-blank source lines: " + ", ".join(f"{k} {v}" for k, v in lines_by_area.items()))
    print(f"product {product} (limit {LIMITS['product_lines']}), lab {lines_by_area['lab']} "
          f"(limit {LIMITS['lab_lines']})")
    print(f"product files over {FILE_LIMIT} lines: {len(big_files)}")
    for n, f in sorted(big_files, reverse=True):
        print(f"  {n:5d} {f}")
    print(f"functions over {FUNC_LIMIT} lines (kernels {KERNEL_LIMIT}): {len(long_funcs)}")
    for n, where, name in sorted(long_funcs, reverse=True):
        print(f"  {n:5d} {where} {name}")
    broken = product > LIMITS["product_lines"] or lines_by_area["lab"] > LIMITS["lab_lines"] or \
        big_files or long_funcs
    return 1 if a.check and broken else 0


if __name__ == "__main__":
    sys.exit(main())
