#!/usr/bin/env python3
"""The JSON of every show holds the numbers its text shows.

Reads a transcript in which each `show ...` (text, or `verbose`) is followed by the same show
with `json` (tests/cli/shows.in), parses the JSON and checks that every number of the text is
in it: integers as JSON numbers, decimals within the text's rounding, HH:MM:SS as whole seconds,
addresses (and other dotted words) inside JSON strings. Exits non-zero, naming each number the
JSON lacks, when one is missing or a JSON output does not parse.

    shows.py TRANSCRIPT
"""
import json
import re
import sys

PROMPT = re.compile(r"^\S+[#>](.*)$")
TOKEN = re.compile(r"[A-Za-z_][\w-]*|\d+(?:\.\d+)*")
CLOCK = re.compile(r"\b(\d{2}):(\d{2}):(\d{2})\b")


def commands(lines):
    """(command, output lines) for each prompt line of the transcript."""
    out, cmd = [], None
    for line in lines:
        m = PROMPT.match(line)
        if m and not line.startswith(" "):
            if cmd is not None:
                out.append((cmd, body))
            cmd, body = m.group(1).strip(), []
        elif cmd is not None and not line.startswith("##"):
            body.append(line)
    if cmd is not None:
        out.append((cmd, body))
    return out


def walk(value, numbers, strings):
    if isinstance(value, dict):
        for v in value.values():
            walk(v, numbers, strings)
    elif isinstance(value, list):
        for v in value:
            walk(v, numbers, strings)
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, (int, float)):
        numbers.append(float(value))
    elif isinstance(value, str):
        strings.append(value)


def missing(text, numbers, strings):
    """The numbers of the text the JSON does not hold."""
    lost = []
    for m in CLOCK.finditer(text):
        seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
        if not any(int(n) == seconds for n in numbers):
            lost.append(m.group(0))
    text = CLOCK.sub(" ", text)
    for token in TOKEN.findall(text):
        if not token[0].isdigit():
            continue
        dots = token.count(".")
        if dots >= 2:
            ok = any(token in s for s in strings)
        elif dots == 1:
            decimals = len(token.split(".")[1])
            tolerance = 0.5 * 10 ** -decimals + 1e-9
            ok = any(abs(n - float(token)) <= tolerance for n in numbers) or any(
                token in s for s in strings
            )
        else:
            ok = any(n == float(token) for n in numbers)
        if not ok:
            lost.append(token)
    return lost


def main():
    with open(sys.argv[1]) as f:
        cmds = commands(f.read().splitlines())
    failures = pairs = 0
    for (text_cmd, text_out), (json_cmd, json_out) in zip(cmds, cmds[1:]):
        if not json_cmd.endswith(" json") or " json" in text_cmd:
            continue
        base = json_cmd[: -len(" json")]
        if text_cmd not in (base, base + " verbose"):
            continue
        pairs += 1
        try:
            data = json.loads(json_out[0])
        except (IndexError, ValueError) as e:
            print(f"{json_cmd}: not JSON: {e}")
            failures += 1
            continue
        numbers, strings = [], []
        walk(data, numbers, strings)
        lost = missing("\n".join(text_out), numbers, strings)
        if lost:
            print(f"{text_cmd}: the JSON lacks {', '.join(sorted(set(lost)))}")
            failures += 1
    if pairs == 0:
        print("no text and JSON pairs in the transcript")
        return 1
    print(f"{pairs} shows: {'every number of the text is in the JSON' if not failures else f'{failures} with numbers missing'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
