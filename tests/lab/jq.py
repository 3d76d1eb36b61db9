#!/usr/bin/env python3
"""The JSON reader of the lab scripts: reads a show's JSON on standard input and prints the
value of a python expression over j (the document), ifs (its interfaces by name) and sess (its
sessions list). Exits non-zero when the JSON or the expression fails.

    jq.py EXPR
"""
import json, sys
try:
    j = json.load(sys.stdin)
except ValueError as e:
    print("bad-json: %s" % e)
    sys.exit(1)
ifs = {i["name"]: i for i in j.get("interfaces", [])} if isinstance(j, dict) else {}
sess = j.get("sessions", []) if isinstance(j, dict) else []
try:
    v = eval(sys.argv[1])
except Exception as e:
    print("error: %r" % e)
    sys.exit(1)
print(v)
