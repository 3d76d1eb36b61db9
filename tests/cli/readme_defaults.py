#!/usr/bin/env python3
"""The README's defaults table says what the settings table says.

Reads the settings from the JSON of `show ip pgm router json` in a transcript (its "settings":
keyword, default_text, unit) and the README's table of defaults (rows
"| `ip pgm router KEYWORD` | DEFAULT | why |"), and checks that both list the same keywords
with the same defaults, written as `show ip pgm router verbose` writes them ("2000 ms",
"on ports 3055 3056"). Exits non-zero naming each difference.

    readme_defaults.py TRANSCRIPT README.md
"""
import json
import re
import sys

ROW = re.compile(r"^\|\s*`ip pgm router ([a-z-]+)`(\*?)\s*\|\s*([^|]*?)\s*\|")


def settings(transcript):
    with open(transcript) as f:
        lines = f.read().splitlines()
    for prev, line in zip(lines, lines[1:]):
        if prev.endswith("show ip pgm router json") and line.startswith("{"):
            return {
                s["keyword"]: (s["default_text"] + (" " + s["unit"] if s["unit"] else ""),
                               s["interface_default"])
                for s in json.loads(line)["settings"]
            }
    sys.exit(f"{transcript}: no `show ip pgm router json`")


def readme(path):
    rows = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows[m.group(1)] = (m.group(3), m.group(2) == "*")
    return rows


def main():
    table, doc = settings(sys.argv[1]), readme(sys.argv[2])
    errors = []
    for keyword, default in table.items():
        if keyword not in doc:
            errors.append(f"ip pgm router {keyword}: not in the README's defaults table")
        elif doc[keyword] != default:
            errors.append(f"ip pgm router {keyword}: README says {doc[keyword]!r}, "
                          f"the settings table {default!r} (default, per interface)")
    for keyword in doc:
        if keyword not in table:
            errors.append(f"ip pgm router {keyword}: in the README, not a setting")
    for e in errors:
        print(e)
    print(f"{len(table)} settings: " + (f"{len(errors)} differences" if errors else
                                        "the README's defaults table agrees"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
