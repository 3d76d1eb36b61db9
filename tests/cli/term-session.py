#!/usr/bin/env python3
"""Drives the interactive pgmrouter client on a pseudo-terminal and prints what the terminal shows.
usage: session.py CLIENT SOCKET < lines   (a line "#! N" sleeps N seconds, not sent)"""
import os, pty, re, select, sys, time

client, sock = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "dumb"
    os.execv(client, [client, "-s", sock])

prompt = re.compile(rb"\n?[A-Za-z0-9_.-]+(\([a-z-]+\))?[>#]$")
buf = b""

def read_until_prompt(limit=30.0):
    global buf
    end = time.time() + limit
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            buf += data
            if prompt.search(buf.rstrip(b" ")):
                # settle: nothing more for 0.3 s
                r2, _, _ = select.select([fd], [], [], 0.3)
                if not r2:
                    return
    return

out = []
read_until_prompt()
for line in sys.stdin.read().splitlines():
    if line.startswith("#! "):
        time.sleep(float(line[3:]))
        continue
    os.write(fd, line.encode() + b"\r")
    read_until_prompt()
os.write(fd, b"exit\r")
time.sleep(0.5)
try:
    while True:
        r, _, _ = select.select([fd], [], [], 0.5)
        if not r:
            break
        d = os.read(fd, 65536)
        if not d:
            break
        buf += d
except OSError:
    pass
text = buf.decode(errors="replace").replace("\r\n", "\n").replace("\r", "")
text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
sys.stdout.write(text)
