#!/usr/bin/env python3
"""The soak's pass criteria and plot (tests/soak/README).

    analyze.py RESULTS_DIR

Reads samples.csv, events.csv and rounds.csv written by run.sh, writes summary.txt and soak.png
into RESULTS_DIR and exits 1 when a criterion failed:
  1. every receiver of every stream round (each round spans the churn events of its time)
     completed, every message exactly once and in order (the peers' own verdict), and every
     churn event did what it should (its own check in run.sh);
  2. after each event, each daemon's RSS and descriptors are back at its baseline (the median
     of the samples before the first event): RSS within RSS_TOL of it plus RSS_SLACK_KB,
     descriptors within FD_TOL, read at the last sample before the next event (at least
     SETTLE seconds after this one; on a machine too busy to sample in between, the first
     sample SETTLE seconds after it);
  3. nothing grows without bound: over the second half of the run, the least-squares growth of
     RSS, descriptors, repair states and control-plane memory, fitted to the samples taken at
     least SETTLE seconds after an event (so an event's own transient is left out), stays
     within the same tolerances, and sessions never exceed the streams' and the flood's.
"""
import csv
import os
import statistics
import sys

RSS_TOL = 0.10  # fraction of the baseline RSS
RSS_SLACK_KB = 1024
FD_TOL = 0
SETTLE = 12  # seconds after an event's start before its effects count as settled
SESSION_LIFETIME = 300  # the daemon's default session-lifetime (s)
REPAIR_GROWTH_MAX = 50  # repair states gained over the second half (the losses keep some)
# Control-plane bytes gained over the second half: the repair pool takes and gives back a chunk
# of 112 KiB with its first and last repair state, so a fit over few samples can see one.
MEMORY_GROWTH_MAX = 256 * 1024


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def slope_growth(points):
    """Least-squares slope times the span of t: the growth the fitted line shows."""
    if len(points) < 3:
        return 0.0
    ts = [p[0] for p in points]
    vs = [p[1] for p in points]
    mt, mv = statistics.fmean(ts), statistics.fmean(vs)
    den = sum((t - mt) ** 2 for t in ts)
    if den == 0:
        return 0.0
    slope = sum((t - mt) * (v - mv) for t, v in zip(ts, vs)) / den
    return slope * (max(ts) - min(ts))


def main():
    res = sys.argv[1]
    samples = read_csv(os.path.join(res, "samples.csv"))
    events = read_csv(os.path.join(res, "events.csv"))
    rounds = read_csv(os.path.join(res, "rounds.csv"))
    params = {}
    try:
        with open(os.path.join(res, "params")) as f:
            for kv in f.read().split():
                k, _, v = kv.partition("=")
                params[k] = v
    except OSError:
        pass
    duration = int(params.get("duration", "0") or 0)
    if not duration and samples:
        duration = int(max(num(s["t"]) for s in samples))
    routers = sorted({s["router"] for s in samples})
    out = []
    failed = []

    def check(text, ok):
        out.append(("pass " if ok else "FAIL ") + text)
        if not ok:
            failed.append(text)

    # 1. the receivers and the events
    bad = [r for r in rounds if r["result"] != "ok"]
    kinds = {}
    for r in rounds:
        k = kinds.setdefault(r["kind"], [0, 0])
        k[0] += 1
        k[1] += int(num(r["messages"]) or 0)
    nrounds = len({r["round"] for r in rounds})
    check(f"receivers complete, exactly once, in order: {len(rounds) - len(bad)}/{len(rounds)} "
          f"over {nrounds} rounds" + "".join(f"; {k}: {v[0]} receivers, {v[1]} messages"
                                             for k, v in sorted(kinds.items())),
          len(rounds) > 0 and not bad)
    for r in bad:
        out.append(f"     round {r['round']} {r['kind']} {r['receiver']}: result={r['result']} "
                   f"messages={r['messages']}/{r['expected']} missing={r['missing']} rc={r['rc']}")
    evfail = [e for e in events if e["ok"] != "1"]
    check(f"churn events did what they should: {len(events) - len(evfail)}/{len(events)} ("
          + ", ".join(f"{n} x{sum(1 for e in events if e['event'] == n)}"
                      for n in dict.fromkeys(e["event"] for e in events)) + ")",
          len(events) > 0 and not evfail)
    for e in evfail:
        out.append(f"     t={e['t_start']} {e['event']} {e['target']}: {e['detail']}")

    # 2. back to the baseline after each event
    by_router = {r: [s for s in samples if s["router"] == r and num(s["rss_kb"])] for r in routers}
    first_event = min((num(e["t_start"]) for e in events), default=duration)
    starts = sorted(num(e["t_start"]) for e in events)
    for r in routers:
        rows = by_router[r]
        base_rows = [s for s in rows if num(s["t"]) < first_event]
        if not base_rows:
            check(f"{r}: baseline samples before the first event", False)
            continue
        base_rss = statistics.median(num(s["rss_kb"]) for s in base_rows)
        base_fds = statistics.median(num(s["fds"]) for s in base_rows)
        rss_lim = base_rss * (1 + RSS_TOL) + RSS_SLACK_KB
        worst_rss, worst_fds, missing = 0.0, 0.0, []
        for i, e in enumerate(events):
            t0 = num(e["t_start"])
            t1 = starts[i + 1] if i + 1 < len(starts) else duration + 3600
            after = [s for s in rows if t0 + SETTLE <= num(s["t"]) < t1]
            if after:
                s = after[-1]
            else:
                # A busy machine samples late: the first settled sample, even past the
                # next event's start.
                after = [s for s in rows if num(s["t"]) >= t0 + SETTLE]
                if not after:
                    missing.append(f"t={int(t0)} {e['event']}")
                    continue
                s = after[0]
            worst_rss = max(worst_rss, num(s["rss_kb"]))
            worst_fds = max(worst_fds, num(s["fds"]))
            if num(s["rss_kb"]) > rss_lim or num(s["fds"]) > base_fds + FD_TOL:
                out.append(f"     {r} after t={int(t0)} {e['event']} (sample t={s['t']}): "
                           f"rss {s['rss_kb']} KB, fds {s['fds']}")
        check(f"{r}: RSS back to baseline after every event: worst {worst_rss:.0f} KB, "
              f"baseline {base_rss:.0f} KB, limit {rss_lim:.0f} KB (+{RSS_TOL:.0%} "
              f"+{RSS_SLACK_KB} KB)", worst_rss <= rss_lim and not missing)
        check(f"{r}: descriptors back to baseline after every event: worst {worst_fds:.0f}, "
              f"baseline {base_fds:.0f} (+{FD_TOL})", worst_fds <= base_fds + FD_TOL
              and not missing)
        if missing:
            out.append(f"     {r}: no settled sample after " + ", ".join(missing))

        # 3. no growth over the second half
        half = [s for s in rows if num(s["t"]) >= duration / 2
                and not any(t0 <= num(s["t"]) < t0 + SETTLE for t0 in starts)]

        def growth(key):
            return slope_growth([(num(s["t"]), num(s[key])) for s in half
                                 if num(s[key]) is not None])

        g = growth("rss_kb")
        check(f"{r}: RSS growth over the second half {g:+.0f} KB "
              f"(limit {base_rss * RSS_TOL + RSS_SLACK_KB:.0f})",
              g <= base_rss * RSS_TOL + RSS_SLACK_KB)
        g = growth("fds")
        check(f"{r}: descriptor growth over the second half {g:+.2f} (limit 0.5)", g <= 0.5)
        g = growth("repair_states")
        check(f"{r}: repair state growth over the second half {g:+.1f} "
              f"(limit {REPAIR_GROWTH_MAX})", g <= REPAIR_GROWTH_MAX)
        g = growth("memory_bytes")
        check(f"{r}: control-plane memory growth over the second half {g:+.0f} B "
              f"(limit {MEMORY_GROWTH_MAX})", g <= MEMORY_GROWTH_MAX)
        # Each round's two streams are new sessions, kept for the session lifetime after
        # their last SPM; then the NAK flood's.
        rnd = int(params.get("round", "60") or 60)
        smax_lim = 2 * (-(-SESSION_LIFETIME // rnd) + 2) + 1
        smax = max((num(s["sessions"]) or 0 for s in rows), default=0)
        check(f"{r}: sessions at most {smax:.0f} (limit {smax_lim}: the streams of the rounds "
              f"within a session lifetime, and the flood's)", smax <= smax_lim)
        last = rows[-1] if rows else {}
        out.append(f"     {r}: last sample t={last.get('t')}: rss {last.get('rss_kb')} KB, "
                   f"fds {last.get('fds')}, sessions {last.get('sessions')}, repair states "
                   f"{last.get('repair_states')}, queue drops {last.get('queue_drops')}, "
                   f"fail-open {last.get('fail_open')}, packet errors {last.get('malformed')}")
    # kill9 leaves its router without a daemon for a moment: a sample then is expected.
    down = [(num(e["t_start"]), num(e["t_end"]) + 1, e["target"]) for e in events
            if e["event"] == "kill9"]
    dead = [s for s in samples if s["pid"] == "0"]
    unexpected = [s for s in dead if not any(a <= num(s["t"]) <= b and r == s["router"]
                                             for a, b, r in down)]
    check(f"every daemon answered every sample but during its kill9 ({len(dead)} samples "
          f"without a daemon, {len(unexpected)} outside a kill9)", not unexpected)

    plot(res, samples, events, routers)
    head = (f"soak {params.get('duration', '?')} s, rounds of {params.get('round', '?')} s, an "
            f"event every {params.get('event_every', '?')} s, samples every "
            f"{params.get('sample', '?')} s, OpenPGM {params.get('pgm_rate', '?')}/s and ZeroMQ "
            f"{params.get('zmq_rate', '?')}/s, ODATA loss {params.get('loss', '?')}")
    verdict = "soak: PASSED" if not failed else f"soak: FAILED ({len(failed)} criteria)"
    text = "\n".join([head] + out + [verdict]) + "\n"
    with open(os.path.join(res, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if not failed else 1


def plot(res, samples, events, routers):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("soak: no matplotlib (python3-matplotlib): no plot")
        return
    panels = [("rss_kb", "RSS (KB)"), ("fds", "descriptors"), ("sessions", "sessions"),
              ("repair_states", "repair states"), ("queue_drops", "queue drops (kernel)"),
              ("fail_open", "fail-open (ids skipped)"), ("malformed", "packet errors")]
    fig, axes = plt.subplots(len(panels) + 1, 1, figsize=(11, 2.1 * (len(panels) + 1)),
                             sharex=True)
    for ax, (key, label) in zip(axes, panels):
        for r in routers:
            pts = [(num(s["t"]), num(s[key])) for s in samples
                   if s["router"] == r and num(s[key]) is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=r, lw=1)
        ax.set_ylabel(label, fontsize=8)
    axes[0].legend(fontsize=7, loc="lower right", ncol=len(routers))
    ax = axes[-1]
    seen = {}
    for s in samples:
        seen.setdefault(num(s["t"]), s)
    ts = sorted(seen)
    for key, label in (("delivered_pgm", "OpenPGM"), ("delivered_zmq", "ZeroMQ")):
        ax.plot(ts, [num(seen[t][key]) for t in ts], label=label, lw=1)
    ax.set_ylabel("messages delivered\n(all receivers)", fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_xlabel("seconds")
    for e in events:
        for a in axes:
            a.axvline(num(e["t_start"]), color="grey", lw=0.6, ls="--")
        axes[0].annotate(e["event"], (num(e["t_start"]), 1.0), xycoords=("data", "axes fraction"),
                         fontsize=6, rotation=90, va="top", ha="right", color="dimgrey")
    axes[0].set_title("pgmrouterd soak (dashed: churn events)", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(res, "soak.png"), dpi=90)


if __name__ == "__main__":
    sys.exit(main())
