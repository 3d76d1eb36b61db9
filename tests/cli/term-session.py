#!/usr/bin/env python3
"""The interactive pgmrouter client on a pseudo-terminal, for tests/cli/reference.sh.

    term-session.py CLIENT SOCKET < lines

Types each line of standard input into the client, waits for the next prompt (at most 30 s),
and prints what the terminal showed, prompts included, as a user would have seen it."""
import os
import pty
import re
import select
import sys
import time

PROMPT = re.compile(rb"[A-Za-z0-9_.-]+(\([a-z-]+\))?[>#]$")


def read_until_prompt(fd, buf, limit=30.0):
    end = time.time() + limit
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            return buf
        if not data:
            return buf
        buf += data
        # a prompt, and nothing more for 0.3 s
        if PROMPT.search(buf.rstrip(b" ")) and not select.select([fd], [], [], 0.3)[0]:
            return buf
    return buf


def main():
    client, sock = sys.argv[1], sys.argv[2]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execv(client, [client, "-s", sock])
    buf = read_until_prompt(fd, b"")
    for line in sys.stdin.read().splitlines():
        os.write(fd, line.encode() + b"\r")
        buf = read_until_prompt(fd, buf)
    os.write(fd, b"exit\r")
    while select.select([fd], [], [], 0.5)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        buf += data
    os.waitpid(pid, 0)
    text = buf.decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
    sys.stdout.write(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text))


main()
