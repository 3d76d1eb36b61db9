#!/bin/bash
# workers-loss: branch-loss's PGM/IP case with pgmrouterd running two workers on threads of their
# own (ip pgm router workers 2; README, Performance, Workers), its checks unchanged: the same
# repairs on the branch that asked, the same NAK confirmation and elimination, r1's counters (the
# workers' added up) against the wire. With router assist only: without it, it is branch-loss.
# E2E_WORKERS and E2E_CASES as given win (E2E_CASES="ip udp ip-ra ip-pim": all of branch-loss).
export E2E_WORKERS=${E2E_WORKERS:-2}
export E2E_VARIANTS=${E2E_VARIANTS:-with}
export E2E_CASES=${E2E_CASES:-ip}
exec "$(dirname "$0")/../branch-loss/run.sh"
