#!/usr/bin/env python3
# hold-sessions.py SOCKET SECONDS: opens as many connections to the daemon's control socket as
# it can (up to 400), says nothing on them, reopens those the daemon closes, for SECONDS; prints
# how many it held at the end. The session-exhaustion half of tests/security/cli_stall.sh.
import socket
import sys
import time

path, secs = sys.argv[1], float(sys.argv[2])
held, most, end = [], 0, time.time() + secs
while time.time() < end:
    while len(held) < 400:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.2)
        try:
            s.connect(path)
        except OSError:
            s.close()
            break
        held.append(s)
    most = max(most, len(held))
    time.sleep(0.2)
    alive = []
    for s in held:
        try:
            s.setblocking(False)
            if s.recv(4096) == b"":
                s.close()
                continue
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        alive.append(s)
    held = alive
print("held %d at the end, %d at most" % (len(held), most))
