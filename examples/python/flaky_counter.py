"""Seed 000's counter increment against a simulated flaky store: naive, then with retrypolicy.

The store drops replies after applying a write, has a short outage, and answers with command
errors now and then. The naive client "retries network errors once" with a plain ``$inc`` and
over-counts whenever a reply was lost after the write applied. The policy client asks
retrypolicy whether each operation is idempotent, rewrites the non-idempotent ``$inc`` into the
seed's two idempotent steps (pending token), and lets ``retrypolicy.mongodb.decide`` rule on every
failure: the count comes out exact. Run: ``python examples/python/flaky_counter.py``.
"""

from __future__ import annotations

import sys
from typing import Any

from retrypolicy import mongodb

Doc = dict[str, Any]


class NetworkError(Exception):
    """The connection broke; ``applied`` says whether the server had applied the write (unknowable to the client)."""

    def __init__(self, applied: bool) -> None:
        super().__init__("network error")
        self.applied = applied


class CommandError(Exception):
    """The server answered ok: 0 with a code and labels."""

    def __init__(self, code: int, labels: list[str]) -> None:
        super().__init__(f"command error {code}")
        self.code, self.labels = code, labels


# What happens to the n-th call the store receives, whoever sends it.
PLAN: dict[int, str] = {2: "reply_lost", 5: "reply_lost", 8: "down", 9: "down", 10: "down", 13: "shutdown", 17: "bad_value", 21: "reply_lost"}


class FlakyStore:
    """A one-document store that speaks just enough of updateOne: $inc, $addToSet, $pull, filters by equality."""

    def __init__(self) -> None:
        self.doc: Doc = {"_id": "counter", "count": 0, "pending": []}
        self.calls = 0
        self.clock_ms = 0

    def _matches(self, flt: Doc) -> bool:
        for key, want in flt.items():
            have = self.doc.get(key)
            if isinstance(have, list) and not isinstance(want, list):
                if want not in have:
                    return False
            elif have != want:
                return False
        return True

    def _apply(self, update: Doc) -> None:
        for op, fields in update.items():
            for key, value in fields.items():
                if op == "$inc":
                    self.doc[key] = self.doc.get(key, 0) + value
                elif op == "$addToSet" and value not in self.doc.setdefault(key, []):
                    self.doc[key].append(value)
                elif op == "$pull":
                    self.doc[key] = [v for v in self.doc.get(key, []) if v != value]
                elif op not in ("$addToSet", "$pull"):
                    raise ValueError(f"unsupported operator {op}")

    def update_one(self, flt: Doc, update: Doc) -> int:
        """Applies the update if the filter matches; returns the matched count or raises."""
        self.calls += 1
        self.clock_ms += 5
        fate = PLAN.get(self.calls, "ok")
        if fate == "down":
            raise NetworkError(applied=False)
        if fate == "shutdown":
            raise CommandError(91, ["RetryableWriteError"])
        if fate == "bad_value":
            raise CommandError(2, [])
        matched = 1 if self._matches(flt) else 0
        if matched:
            self._apply(update)
        if fate == "reply_lost":
            raise NetworkError(applied=True)
        return matched


def as_mongo_error(e: Exception) -> Doc:
    """The failure in the core's MongoError shape."""
    if isinstance(e, NetworkError):
        return {"kind": "network"}
    assert isinstance(e, CommandError)
    return {"kind": "server", "code": e.code, "labels": e.labels}


def log(store: FlakyStore, text: str) -> None:
    print(f"  t={store.clock_ms:>4} ms  call {store.calls:>2}  {text}")


def naive(store: FlakyStore, increments: int) -> int:
    """Plain $inc, and on a network error retry once: what seed 000 warns against for $inc."""
    done = 0
    for i in range(increments):
        for attempt in range(2):
            try:
                store.update_one({"_id": "counter"}, {"$inc": {"count": 1}})
                log(store, f"inc #{i}: ok")
                done += 1
                break
            except NetworkError:
                log(store, f"inc #{i}: network error -> {'retry once' if attempt == 0 else 'give up'}")
            except CommandError as e:
                log(store, f"inc #{i}: command error {e.code} -> give up")
                break
    return done


def run_step(store: FlakyStore, name: str, flt: Doc, update: Doc, rounds: int = 4) -> bool:
    """Sends one idempotent step; retrypolicy decides each retry; later rounds resend it (safe: idempotent)."""
    verdict = mongodb.idempotency(op="updateOne", filter=flt, update=update)
    assert verdict["idempotent"], verdict
    for rnd in range(rounds):
        request: Doc = {"operation": {"name": "updateOne"}, "attempts": 0}
        last: Exception | None = None
        while True:
            try:
                store.update_one(flt, update)
                log(store, f"{name}: ok")
                return True
            except (NetworkError, CommandError) as e:
                last = e
                d = mongodb.decide(request, as_mongo_error(e))
                log(store, f"{name}: {e} -> {d['action']} ({d['rule']})")
                if d["action"] != "retry":
                    break
                request = {**request, "attempts": d["attempts"], "overloaded": d["overloaded"]}
        if isinstance(last, CommandError) and "RetryableWriteError" not in last.labels:
            log(store, f"{name}: not a transient error: the increment fails")
            return False  # a real command error: resending the same step cannot help
        store.clock_ms += 100 * (rnd + 1)  # the application's own pause before the next round
    return False


def with_policy(store: FlakyStore, increments: int) -> int:
    """Each $inc becomes seed 000's two idempotent steps, retried as retrypolicy decides."""
    update = {"$inc": {"count": 1}}
    report = mongodb.idempotency(op="updateOne", filter={"_id": "counter"}, update=update)
    print(f"  retrypolicy: $inc is idempotent? {report['idempotent']} -> rewrite into two steps")
    done = 0
    for i in range(increments):
        rewrite = mongodb.pending_token_rewrite({"_id": "counter"}, update, token=f"inc-{i}")
        s1, s2 = rewrite["step1"], rewrite["step2"]
        if not run_step(store, f"inc #{i} step 1", s1["filter"], s1["update"]):
            continue  # nothing was applied: the increment failed cleanly
        if run_step(store, f"inc #{i} step 2", s2["filter"], s2["update"]):
            done += 1
    return done


def main() -> int:
    increments = 8
    ok = True
    for title, client in (("naive: $inc, retry network errors once", naive), ("retrypolicy: two-step rewrite + mongodb.decide", with_policy)):
        store = FlakyStore()
        print(f"\n== {title}")
        done = client(store, increments)
        count, pending = store.doc["count"], store.doc["pending"]
        exact = count == done and not pending
        verdict = "exact" if exact else ("over-counted" if count > done else "under-counted")
        print(f"  => {done} increments reported done, counter = {count}, pending = {pending}: {verdict}")
        if client is with_policy:
            ok = ok and exact
        else:
            ok = ok and not exact  # the naive client must show the bug this example is about
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
