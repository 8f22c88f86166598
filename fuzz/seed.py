#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, fuzz/corpus/<target>/, from spec-fixtures/cases/*.json.

- json_api: `<function>\\n<input JSON>` for up to PER_FUNCTION cases of each fixture function
  (spread over its cases, error cases included), plus inputs built from `decide` cases for the
  API functions no fixture file covers (parse_request, best_effort_delay, format_decision,
  explain_decision).
- policy_roundtrip: every policy text of policy.json, and every policy a case passes inline.
- invariants: its input is `arbitrary`'s encoding of a Rust struct, which has no encoder to write
  fixtures in, so its seeds are fixed pseudo-random bytes (the same on every run of this script).

Run `python3 fuzz/seed.py` (or `make -C fuzz seed`); the output is committed. Each target's
folder is rewritten whole; files found by fuzzing belong in fuzz/regressions/<target>/ instead.
"""

import glob
import json
import os
import random
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "spec-fixtures", "cases")
CORPUS = os.path.join(HERE, "corpus")
PER_FUNCTION = 6
RANDOM_SEEDS = 32


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def spread(items, n):
    """Up to n items, evenly spaced through the list (first and last included)."""
    if len(items) <= n:
        return list(items)
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


def load_cases():
    by_function = {}
    for path in sorted(glob.glob(os.path.join(CASES, "*.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        by_function.setdefault(doc["function"], []).extend(doc["cases"])
    return by_function


def json_api_seeds(by_function):
    seeds = {}
    for function, cases in sorted(by_function.items()):
        for case in spread(cases, PER_FUNCTION):
            seeds[case["id"]] = f"{function}\n{compact(case['input'])}"
    decided = [c for c in by_function.get("decide", []) if "expect" in c]
    for case in spread(decided, PER_FUNCTION):
        request, decision = case["input"]["request"], case["expect"]
        seeds[f"parse_request-{case['id']}"] = f"parse_request\n{compact({'request': request})}"
        seeds[f"best_effort_delay-{case['id']}"] = f"best_effort_delay\n{compact(case['input'])}"
        seeds[f"format_decision-{case['id']}"] = f"format_decision\n{compact({'decision': decision})}"
        explain = {"request": request, "decision": decision}
        seeds[f"explain_decision-{case['id']}"] = f"explain_decision\n{compact(explain)}"
    return seeds


def policy_seeds(by_function):
    texts = [c["input"]["json"] for c in by_function.get("parse_policy", [])]
    for cases in by_function.values():
        for case in cases:
            policy = case["input"].get("policy") if isinstance(case["input"], dict) else None
            if policy is not None:
                texts.append(compact(policy))
    unique = list(dict.fromkeys(texts))
    return {f"policy-{i:03}": text for i, text in enumerate(unique)}


def invariant_seeds():
    rng = random.Random(15)
    return {
        f"random-{i:03}": bytes(rng.randrange(256) for _ in range(rng.randrange(24, 160)))
        for i in range(RANDOM_SEEDS)
    }


def write(target, seeds):
    folder = os.path.join(CORPUS, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, content in seeds.items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        with open(os.path.join(folder, re.sub(r"[^A-Za-z0-9_.-]", "_", name)), "wb") as f:
            f.write(data)
    size = sum(len(c.encode("utf-8") if isinstance(c, str) else c) for c in seeds.values())
    print(f"{target}: {len(seeds)} seeds, {size} bytes")


def main():
    by_function = load_cases()
    write("json_api", json_api_seeds(by_function))
    write("policy_roundtrip", policy_seeds(by_function))
    write("invariants", invariant_seeds())


if __name__ == "__main__":
    main()
