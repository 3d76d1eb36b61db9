#!/usr/bin/env python3
"""Tables of tests/fuzz/coverage.sh: coverage.py ROOT REPORT_DIR [IGNORED_FILE...].

REPORT_DIR holds NAME.json (llvm-cov export -summary-only of one target over every object of
the library), all.json (every target's profile merged) and inputs ("NAME COUNT" lines). Prints
lines and functions reached per target (and the share of the lines of the files it enters at
all), then the lines reached per source folder, as Markdown.
"""
import json
import os
import sys

LIB_DIRS = ("cli", "control", "dataplane", "router")


def load(path, root, ignored):
    """{file relative to root: (lines, lines covered, functions, functions covered)}"""
    with open(path) as f:
        data = json.load(f)
    files = {}
    for entry in data["data"][0]["files"]:
        rel = os.path.relpath(entry["filename"], root)
        if rel.split("/")[0] not in LIB_DIRS or rel in ignored:
            continue
        s = entry["summary"]
        files[rel] = (s["lines"]["count"], s["lines"]["covered"], s["functions"]["count"],
                      s["functions"]["covered"])
    return files


def pct(part, whole):
    return f"{100.0 * part / whole:.1f}" if whole else "-"


def main():
    root, report, ignored = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    targets = []
    with open(os.path.join(report, "inputs")) as f:
        for line in f:
            name, count = line.split()
            targets.append((name, int(count)))
    per = {name: load(os.path.join(report, name + ".json"), root, ignored)
           for name, _ in targets}
    union = load(os.path.join(report, "all.json"), root, ignored)
    # the denominator: every file of the library (any target's listing has them all)
    total_l = sum(v[0] for v in union.values())
    total_f = sum(v[2] for v in union.values())

    print("| Target | Inputs | Lines reached | Functions reached | Lines of the files it enters |")
    print("|---|---|---|---|---|")
    for name, count in targets + [("all together", None)]:
        files = per.get(name, union)
        lc = sum(v[1] for v in files.values())
        fc = sum(v[3] for v in files.values())
        label = f"`{name}`" if count is not None else name
        inputs = f"{count:,}" if count is not None else f"{sum(c for _, c in targets):,}"
        # depth: the lines of the files where it reaches anything at all
        entered = [v for v in files.values() if v[1] > 0]
        el = sum(v[0] for v in entered)
        print(f"| {label} | {inputs} | {lc:,} of {total_l:,} ({pct(lc, total_l)} %) | "
              f"{fc:,} of {total_f:,} ({pct(fc, total_f)} %) | "
              f"{pct(lc, el)} % of {el:,} in {len(entered)} file{'s' if len(entered) != 1 else ''} |")

    folders = sorted({os.path.dirname(rel) for rel in union})
    print()
    print("Lines reached per source folder, per cent of the folder's lines:")
    print()
    short = [name.replace("fuzz_", "") for name, _ in targets]
    print("| Folder | Lines | " + " | ".join(short) + " | all |")
    print("|---|---" + "|---" * (len(targets) + 1) + "|")
    for folder in folders:
        in_folder = [rel for rel in union if os.path.dirname(rel) == folder]
        lines = sum(union[rel][0] for rel in in_folder)
        cells = []
        for name, _ in targets + [("all", None)]:
            files = per.get(name, union)
            cells.append(pct(sum(files.get(rel, (0, 0, 0, 0))[1] for rel in in_folder), lines))
        print(f"| {folder}/ | {lines:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
