#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Validate a Zipkin v2 JSON file against Zipkin's published schema.

Usage: zipkin-check.py SCHEMA FILE

SCHEMA is Zipkin's zipkin2-api.yaml (OpenAPI 2.0; tests/host/data/), FILE
a JSON array of spans (magnet-read --zipkin). FILE must be a ListOfSpans
as the schema defines it (its $refs resolved inside the document), and,
beyond what the schema's types say, what its descriptions require:
timestamps and durations in microseconds, a duration of at least 1, kind
one of its four. Prints {"spans": N}; exits 1 with the first fault.
"""
import json
import sys

import jsonschema
import yaml


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        api = yaml.safe_load(f)
    with open(sys.argv[2]) as f:
        spans = json.load(f)
    # the document's definitions, with ListOfSpans as the root
    schema = dict(api["definitions"]["ListOfSpans"])
    schema["definitions"] = api["definitions"]
    validator = jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(spans), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        sys.exit("zipkin-check: %s: %s: %s" % (
            sys.argv[2], "/".join(str(p) for p in e.path), e.message))
    for i, s in enumerate(spans):
        if not isinstance(s.get("timestamp"), int) or s["timestamp"] < 10**15:
            sys.exit("zipkin-check: span %d: timestamp not in microseconds" % i)
        if "duration" in s and s["duration"] < 1:
            sys.exit("zipkin-check: span %d: duration below 1" % i)
    print(json.dumps({"spans": len(spans)}))


if __name__ == "__main__":
    main()
