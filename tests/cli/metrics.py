#!/usr/bin/env python3
"""`show ip pgm router metrics` is OpenMetrics text whose values are the JSON shows'.

Reads a transcript (tests/cli/metrics.in) whose last `show ip pgm router metrics` is followed by
`show ip pgm router json`, `... traffic json` and `... dataplane json` taken at the same moment.
Parses the metrics with prometheus_client's OpenMetrics parser when it is installed (Debian
python3-prometheus-client), else with a strict check of the format written here, and compares
every sample with the JSON; a sample the JSON does not have, or a JSON counter without its
sample, is an error. Exits non-zero naming each difference.

    metrics.py TRANSCRIPT
"""
import json
import re
import sys

PROMPT = re.compile(r"^\S+[#>](.*)$")

# the data-plane families and where `show ip pgm router dataplane json` has them
DATAPLANE = {
    "pgmrouter_queue_packets_total": ("queue_stats", "packets"),
    "pgmrouter_queue_accepted_total": ("queue_stats", "accepted"),
    "pgmrouter_queue_dropped_total": ("queue_stats", "dropped"),
    "pgmrouter_queue_enobufs_total": ("queue_stats", "enobufs"),
    "pgmrouter_queue_not_delivered_total": ("queue_stats", "id_gaps"),
    "pgmrouter_output_packets_total": ("output", "packets"),
    "pgmrouter_output_errors_total": ("output", "errors"),
    "pgmrouter_path_malformed_total": ("path", "malformed"),
    "pgmrouter_path_udp_not_pgm_total": ("path", "udp_not_pgm"),
    "pgmrouter_replicated_total": ("replication", "replicated"),
    "pgmrouter_replication_copies_total": ("replication", "copies"),
    "pgmrouter_replication_no_route_total": ("replication", "no_route"),
    "pgmrouter_replication_wrong_interface_total": ("replication", "wrong_interface"),
    "pgmrouter_kernel_queue_dropped_total": ("kernel", "queue_dropped"),
    "pgmrouter_routes": ("replication", "routes"),
}
SUMMARY = {
    "pgmrouter_sessions": "sessions",
    "pgmrouter_sessions_limit": "max_sessions",
    "pgmrouter_repair_states": "repair_states",
    "pgmrouter_repair_states_limit": "max_rexmit_states",
    "pgmrouter_memory_bytes": "memory_bytes",
}


def outputs(lines):
    """{command: output lines}, the last of each command."""
    out, cmd = {}, None
    for line in lines:
        m = PROMPT.match(line)
        if m and not line.startswith(" "):
            cmd = m.group(1).strip()
            out[cmd] = []
        elif cmd is not None and not line.startswith("##"):
            out[cmd].append(line)
    return out


def parse_strict(text):
    """[(name, labels, value)] after checking the OpenMetrics text line by line."""
    name_re = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
    label_re = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
    sample_re = re.compile(
        rf"^({name_re})(?:\{{({label_re}(?:,{label_re})*)\}})? (-?[0-9]+(?:\.[0-9]+)?)$"
    )
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("no newline after the last line")
    lines = lines[:-1]
    if not lines or lines[-1] != "# EOF":
        raise ValueError("the last line is not # EOF")
    families, current, samples = {}, None, []
    for n, line in enumerate(lines[:-1], 1):
        m = re.match(rf"^# TYPE ({name_re}) (counter|gauge)$", line)
        if m:
            if m.group(1) in families:
                raise ValueError(f"line {n}: family {m.group(1)} declared twice")
            current = m.group(1)
            families[current] = m.group(2)
            continue
        m = re.match(rf"^# HELP ({name_re}) \S.*$", line)
        if m:
            if m.group(1) != current:
                raise ValueError(f"line {n}: HELP of {m.group(1)} outside its family")
            continue
        m = sample_re.match(line)
        if not m:
            raise ValueError(f"line {n}: not OpenMetrics: {line!r}")
        name = m.group(1)
        want = current + "_total" if families.get(current) == "counter" else current
        if name != want:
            raise ValueError(f"line {n}: sample {name} in family {current}")
        labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        samples.append((name, labels, float(m.group(3))))
    return samples


def parse(text):
    try:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    except ImportError:
        return "strict check", parse_strict(text)
    samples = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.append((s.name, dict(s.labels), float(s.value)))
    return "prometheus_client", samples


def main():
    with open(sys.argv[1]) as f:
        out = outputs(f.read().splitlines())
    try:
        metrics = "\n".join(out["show ip pgm router metrics"]) + "\n"
        summary = json.loads(out["show ip pgm router json"][0])
        traffic = json.loads(out["show ip pgm router traffic json"][0])
        dataplane = json.loads(out["show ip pgm router dataplane json"][0])
    except (KeyError, IndexError, ValueError) as e:
        print(f"metrics: the transcript lacks a show or its JSON: {e}")
        return 1
    try:
        parser, samples = parse(metrics)
    except ValueError as e:
        print(f"metrics: not OpenMetrics: {e}")
        return 1
    ifs = {i["name"]: i for i in traffic["interfaces"]}
    errors, seen = [], set()

    def expect(key, got, want):
        seen.add(key)
        if want is None:
            errors.append(f"{key}: no such value in the JSON")
        elif float(want) != got:
            errors.append(f"{key}: {got:g} in the metrics, {want} in the JSON")

    for name, labels, value in samples:
        key = (name, tuple(sorted(labels.items())))
        if name == "pgmrouter_up":
            expect(key, value, int(summary["running"]))
        elif name in SUMMARY:
            expect(key, value, summary.get(SUMMARY[name]))
        elif name in DATAPLANE:
            section, field = DATAPLANE[name]
            expect(key, value, dataplane.get(section, {}).get(field))
        elif name in ("pgmrouter_received_total", "pgmrouter_sent_total"):
            part = "received" if name == "pgmrouter_received_total" else "sent"
            i = ifs.get(labels.get("interface"), {})
            expect(key, value, i.get(part, {}).get(labels.get("type", "").upper()))
        elif name == "pgmrouter_events_total":
            i = ifs.get(labels.get("interface"), {})
            expect(key, value, i.get("events", {}).get(labels.get("event")))
        elif name == "pgmrouter_malformed_total":
            i = ifs.get(labels.get("interface"), {})
            expect(key, value, i.get("errors", {}).get(labels.get("error")))
        elif name == "pgmrouter_router_events_total":
            expect(key, value, traffic["router"].get(labels.get("event")))
        else:
            errors.append(f"{name}: a sample this check does not know")
    # every counter of the traffic JSON has its sample
    for name, i in ifs.items():
        for part, metric, label in (
            ("received", "pgmrouter_received_total", "type"),
            ("sent", "pgmrouter_sent_total", "type"),
            ("events", "pgmrouter_events_total", "event"),
            ("errors", "pgmrouter_malformed_total", "error"),
        ):
            for k in i[part]:
                value = k.lower() if label == "type" else k
                key = (metric, tuple(sorted({"interface": name, label: value}.items())))
                if key not in seen:
                    errors.append(f"{metric}{{interface={name},{label}={value}}}: missing")
    for k in traffic["router"]:
        if ("pgmrouter_router_events_total", (("event", k),)) not in seen:
            errors.append(f"pgmrouter_router_events_total{{event={k}}}: missing")
    for e in errors:
        print(f"metrics: {e}")
    nonzero = sum(1 for _, _, v in samples if v)
    print(f"metrics ({parser}): {len(samples)} samples, {nonzero} non-zero, "
          f"{'all equal to the JSON' if not errors else f'{len(errors)} differences'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
