//! `retrypolicy demo`: the bundled examples as a story a newcomer follows. Each scene says in one
//! sentence what happens, explains each domain term the first time it appears, shows the command
//! that reproduces it, and prints a small table; `--json` prints each scene's machine answer.

use std::collections::HashSet;
use std::fmt::Write;

use retrypolicy::{explain, simulate, simulate_storm, Policy, Scenario, StormScenario};
use retrypolicy_wire::{api::call, from_json_str};
use serde_json::{json, Value};

use crate::table;

/// The domain terms a scene may use, each explained once, at its first use.
const TERMS: &[(&str, &str)] = &[
    ("RFC 0049", "Couchbase's SDK 3 retry specification, which every Couchbase SDK follows"),
    ("RetryReason", "why an attempt failed, in RFC 0049's names (SOCKET_CLOSED_WHILE_IN_FLIGHT, KV_LOCKED ...); the reason decides whether a retry is allowed"),
    ("idempotent", "an operation that does the same thing when applied twice (a get, a replace); only those may be retried when a failure leaves the outcome unknown"),
    ("best effort", "RFC 0049's default strategy: retry what may be retried, backing off 1, 2, 4 ... ms up to 500 ms"),
    ("capped to the timeout", "a wait never runs past the request's timeout: the last one is cut short and the request is then cancelled"),
    ("KV_NOT_MY_VBUCKET", "the server no longer owns the vBucket (one of a bucket's 1,024 shards) the key belongs to, as during a rebalance; RFC 0049 always retries it"),
    ("controlled backoff", "the fixed waits 1, 10, 50, 100, 500, 1000 ms that RFC 0049 gives always-retry reasons, whatever the strategy"),
    ("fail fast", "the strategy that retries nothing but the always-retry reasons"),
    ("jitter", "randomness in each wait, so clients do not retry in lockstep (full jitter: a draw between 0 and the backoff); the caller passes the draw, so a run is reproducible"),
    ("pending token", "seed 000's rewrite of a counter: step 1 adds a unique token to the document, step 2 applies the increment only where that token is pending and removes it; each step is idempotent"),
    ("withTransaction", "the MongoDB drivers' helper that runs a callback in a transaction and retries within 120 s"),
    ("TransientTransactionError", "an error label: the whole transaction may be run again from the start"),
    ("UnknownTransactionCommitResult", "an error label: nobody knows whether the commit applied, so the commit alone is retried (retry_commit)"),
    ("positional update", "a path such as images.1.width names an array element by its index; if another writer adds or removes elements, a retry writes into the wrong one (seed 003)"),
    ("run machine", "the core's state machine of one retry run: told each event (start, an attempt ended, a wait ended), it answers send, wait D, or done; every runner in every language is a loop over it"),
    ("Retry-After", "the HTTP header (RFC 9110 §10.2.3) with which a 429 or 503 says how long to wait; it replaces the backoff"),
    ("circuit breaker", "state shared by requests to one endpoint: after enough failures it opens and refuses attempts, after its sleep window it lets one attempt through (the canary), and it closes when that one succeeds"),
    ("retry budget", "state shared by requests that caps their retries, so a failing server is not hit harder: token_bucket (gRPC's retryThrottling), retry_quota (the AWS SDKs'), percentage (Finagle's)"),
    ("amplification", "attempts that reached the server per request: 1.00x is one each, no retry"),
    ("gRFC A6", "gRPC's retry design: a service's config gives each method a retry policy or a hedging policy, servers may push back (grpc-retry-pushback-ms), and a token bucket throttles retries"),
    ("hedging", "sending copies of a call before the first answers, one every hedgingDelay: the first success wins and the rest are cancelled; a non-fatal status sends the next copy at once"),
    ("AWS standard mode", "the retry rules every AWS SDK shares: transient and throttling errors are retried, 3 attempts, an exponential backoff with full jitter (a shorter one for transient errors since the 2026 update), and a retry quota"),
];

/// What a scene shows, and the input it shows it for.
enum Body {
    /// A scenario file replayed as a timeline (`retrypolicy simulate`).
    Simulate(&'static str, &'static str),
    /// One decision as a sentence (`retrypolicy explain`).
    Explain(&'static str, &'static str),
    /// A withTransaction run: each event and the action answered.
    Transaction(&'static str, &'static str),
    /// Seed 000's two-step rewrite of an increment.
    Rewrite(&'static str, &'static str),
    /// An update's idempotency hazards.
    Idempotency(&'static str, &'static str),
    /// One HTTP loop step (`retrypolicy http next`).
    HttpNext(&'static str, &'static str),
    /// A run replayed through the run machine.
    Run(&'static str, &'static str),
    /// A storm, with and without each budget.
    Storm(&'static str, &'static str),
    /// A hedged gRPC call's events replayed (`retrypolicy grpc hedge`).
    GrpcHedge(&'static str, &'static str),
    /// AWS standard-mode attempts through the decisions and the quota (`retrypolicy aws run`).
    AwsRun(&'static str, &'static str),
}

/// One scene: its title, what happens in one sentence, the terms it uses, and what it shows.
struct Scene {
    title: &'static str,
    says: &'static str,
    terms: &'static [&'static str],
    body: Body,
}

/// A bundled example: its path from the repository's root (shown in the command) and its text.
macro_rules! example {
    ($path:literal) => {
        ($path, include_str!(concat!("../../", $path)))
    };
}

/// The story, in order.
fn scenes() -> Vec<Scene> {
    let (s01, t01) = example!("examples/scenarios/01-kv-upsert-socket-closed.json");
    let (s02, t02) = example!("examples/scenarios/02-kv-get-socket-closed-once.json");
    let (s03, t03) = example!("examples/scenarios/03-kv-get-temporary-failure-until-timeout.json");
    let (s04, t04) = example!("examples/scenarios/04-not-my-vbucket-storm-fail-fast.json");
    let (s05, t05) = example!("examples/scenarios/05-counter-increment-naive.json");
    let (s06, t06) = example!("examples/scenarios/06-counter-increment-idempotent.json");
    let (s07, t07) = example!("examples/scenarios/07-kv-locked-with-full-jitter.json");
    let (d, td) = example!("examples/decide/kv-upsert-not-my-vbucket.json");
    let (rw, trw) = example!("examples/mongodb/counter-rewrite.json");
    let (tx, ttx) = example!("examples/mongodb/with-transaction.json");
    let (pu, tpu) = example!("examples/mongodb/positional-update.json");
    let (r1, tr1) = example!("examples/runs/http-503-503-200.json");
    let (h, th) = example!("examples/http/429-past-the-deadline.json");
    let (r2, tr2) = example!("examples/runs/kv-breaker-open.json");
    let (st1, tst1) = example!("examples/storms/kv-get-all-failing.json");
    let (st2, tst2) = example!("examples/storms/kv-get-all-failing-with-breaker.json");
    let (g1, tg1) = example!("examples/grpc/hedged-call.json");
    let (a1, ta1) = example!("examples/aws/standard-2026-500-then-throttled.json");
    vec![
        Scene {
            title: "An upsert loses its socket",
            says: "A Couchbase write was on the wire when its connection closed; it may have applied, so the client must not send it again.",
            terms: &["RFC 0049", "RetryReason", "idempotent"],
            body: Body::Simulate(s01, t01),
        },
        Scene {
            title: "A get loses its socket",
            says: "The same failure on a read is harmless to repeat: one short wait, and the second attempt succeeds.",
            terms: &["best effort"],
            body: Body::Simulate(s02, t02),
        },
        Scene {
            title: "A get that keeps failing",
            says: "The server answers 'temporary failure' every time: the waits double up to 500 ms until the 2.5 s timeout ends the request.",
            terms: &["capped to the timeout"],
            body: Body::Simulate(s03, t03),
        },
        Scene {
            title: "A rebalance",
            says: "Keys move between servers, and even a client that never retries (fail fast) must follow them.",
            terms: &["KV_NOT_MY_VBUCKET", "controlled backoff", "fail fast"],
            body: Body::Simulate(s04, t04),
        },
        Scene {
            title: "A locked document, with jitter",
            says: "Five waits for a lock, each a random share of a growing backoff, the draws fixed in the scenario.",
            terms: &["jitter"],
            body: Body::Simulate(s07, t07),
        },
        Scene {
            title: "A counter, naive",
            says: "An increment is not idempotent: after a network blip nobody knows whether it counted, so it fails rather than count twice.",
            terms: &[],
            body: Body::Simulate(s05, t05),
        },
        Scene {
            title: "The counter, rewritten",
            says: "The increment becomes two idempotent updates, so the blip can be retried and the count stays exact.",
            terms: &["pending token"],
            body: Body::Rewrite(rw, trw),
        },
        Scene {
            title: "The rewritten counter under the same blip",
            says: "Each step may now be retried: the blip costs one short wait.",
            terms: &[],
            body: Body::Simulate(s06, t06),
        },
        Scene {
            title: "One decision, in words",
            says: "Every decision carries its rule and the section of the spec it follows; `explain` says it as a sentence.",
            terms: &[],
            body: Body::Explain(d, td),
        },
        Scene {
            title: "A MongoDB transaction",
            says: "The callback fails with a transient error, the transaction runs again, its commit's answer is lost, and the commit alone is retried.",
            terms: &["withTransaction", "TransientTransactionError", "UnknownTransactionCommitResult"],
            body: Body::Transaction(tx, ttx),
        },
        Scene {
            title: "An update that is unsafe to retry",
            says: "The update is idempotent by its operator, yet it addresses an array element by index, which a concurrent writer can shift.",
            terms: &["positional update"],
            body: Body::Idempotency(pu, tpu),
        },
        Scene {
            title: "An HTTP GET through 503 and 429",
            says: "The runner in every language loops over one machine: a 503 waits the backoff, a 429 waits what its Retry-After asks.",
            terms: &["run machine", "Retry-After"],
            body: Body::Run(r1, tr1),
        },
        Scene {
            title: "A 429 that asks for too long",
            says: "Retry-After asks for 3 s with 2.5 s left before the deadline: the loop stops now and tells the caller when to try again.",
            terms: &[],
            body: Body::HttpNext(h, th),
        },
        Scene {
            title: "A retry behind an open breaker",
            says: "The breaker opened after the first failure: the retry waits for its window instead of spinning, and the second attempt succeeds.",
            terms: &["circuit breaker"],
            body: Body::Run(r2, tr2),
        },
        Scene {
            title: "A retry storm",
            says: "A thousand requests against a server that fails them all: without a budget each one retries until its timeout.",
            terms: &["retry budget", "amplification"],
            body: Body::Storm(st1, tst1),
        },
        Scene {
            title: "The same storm, behind a circuit breaker",
            says: "The breaker refuses almost every attempt, so fewer reach the server than there are requests.",
            terms: &[],
            body: Body::Storm(st2, tst2),
        },
        Scene {
            title: "A hedged gRPC call",
            says: "A copy goes every 500 ms; an UNAVAILABLE sends the next at once, a pushback of 100 ms delays the one after, and the first OK cancels the rest.",
            terms: &["gRFC A6", "hedging"],
            body: Body::GrpcHedge(g1, tg1),
        },
        Scene {
            title: "An AWS call through a 500 and a throttling error",
            says: "With the 2026 behaviour a 500 waits up to 50 ms and costs the quota 14 tokens; a ThrottlingException waits up to 2 s and costs 5; the success gives the last cost back.",
            terms: &["AWS standard mode"],
            body: Body::AwsRun(a1, ta1),
        },
    ]
}

/// A scene's command line, its machine answer, and its table.
fn show(body: &Body) -> Result<(String, Value, String), retrypolicy::Error> {
    let parse = |text: &str| from_json_str::<Value>(text);
    Ok(match body {
        Body::Simulate(path, text) => {
            let scenario: Scenario = from_json_str(text)?;
            let timeline = simulate(&scenario)?;
            let answer = serde_json::to_value(&timeline).unwrap_or_default();
            (
                format!("retrypolicy simulate {path}"),
                answer,
                table::timeline(&scenario, &timeline),
            )
        }
        Body::Explain(path, text) => {
            let (request, decision) = crate::decide_value(&parse(text)?, &Policy::default())?;
            let answer = parse(&decision.to_json())?;
            (
                format!("retrypolicy explain --input {path}"),
                answer,
                format!("  {}\n", explain(&request, &decision)),
            )
        }
        Body::Transaction(path, text) => {
            let input = parse(text)?;
            let answer = call("mongodb_with_transaction", &input)?;
            (
                format!("retrypolicy mongodb transaction --input {path}"),
                answer.clone(),
                table::transaction(&input, &answer),
            )
        }
        Body::Rewrite(path, text) => {
            let input = parse(text)?;
            let answer = call("mongodb_pending_token_rewrite", &input)?;
            (
                format!("retrypolicy mongodb rewrite --input {path}"),
                answer.clone(),
                table::rewrite(&input, &answer),
            )
        }
        Body::Idempotency(path, text) => {
            let input = parse(text)?;
            let answer = call("mongodb_idempotency", &input)?;
            (
                format!("retrypolicy mongodb idempotency --input {path}"),
                answer.clone(),
                table::hazards(&answer),
            )
        }
        Body::HttpNext(path, text) => {
            let input = parse(text)?;
            let answer = call("http_next", &input)?;
            (
                format!("retrypolicy http next --input {path}"),
                answer.clone(),
                table::http_step(&input, &answer),
            )
        }
        Body::Run(path, text) => {
            let input = parse(text)?;
            let answer = call("run", &input)?;
            (
                format!("retrypolicy run --input {path}"),
                answer.clone(),
                table::render_run(&input, &answer) + "\n",
            )
        }
        Body::GrpcHedge(path, text) => {
            let input = parse(text)?;
            let answer = call("grpc_hedge", &input)?;
            (
                format!("retrypolicy grpc hedge --input {path}"),
                answer.clone(),
                table::hedge(&input, &answer),
            )
        }
        Body::AwsRun(path, text) => {
            let input = parse(text)?;
            let answer = call("aws_retry_run", &input)?;
            (
                format!("retrypolicy aws run --input {path}"),
                answer.clone(),
                table::aws_run(&input, &answer),
            )
        }
        Body::Storm(path, text) => {
            let storm: StormScenario = from_json_str(text)?;
            let reports = crate::compare_budgets(&storm)?
                .iter()
                .map(simulate_storm)
                .collect::<Result<Vec<_>, _>>()?;
            (
                format!("retrypolicy storm --compare --input {path}"),
                serde_json::to_value(&reports).unwrap_or_default(),
                table::render_storm(&storm, &reports),
            )
        }
    })
}

/// The whole story as text (`json`: one JSON line per scene instead).
pub fn render(json: bool) -> Result<String, retrypolicy::Error> {
    let mut out = String::new();
    let mut explained = HashSet::new();
    if !json {
        out.push_str(
            "retrypolicy decides whether and when to retry a failed call, the same way in every language.\n",
        );
        out.push_str(
            "Each scene below is one of the bundled examples; the line starting with $ reproduces it.\n",
        );
    }
    for (n, scene) in scenes().iter().enumerate() {
        let (command, answer, shown) = show(&scene.body)?;
        if json {
            let line = json!({"scene": n + 1, "title": scene.title, "command": command, "answer": answer});
            let _ = writeln!(out, "{line}");
            continue;
        }
        let _ = writeln!(out, "\n{}. {}", n + 1, scene.title);
        let _ = writeln!(out, "   {}", scene.says);
        for term in scene.terms {
            if explained.insert(*term) {
                let meaning = TERMS.iter().find(|(t, _)| t == term).map_or("", |(_, m)| m);
                let _ = writeln!(out, "   - {term}: {meaning}.");
            }
        }
        let _ = writeln!(out, "   $ {command}");
        out.push_str(&shown);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_term_a_scene_uses_is_defined_and_every_defined_term_is_used() {
        let used: HashSet<&str> = scenes().iter().flat_map(|s| s.terms.iter().copied()).collect();
        for (term, _) in TERMS {
            assert!(used.contains(term), "{term} is defined but no scene uses it");
        }
        for term in &used {
            assert!(
                TERMS.iter().any(|(t, _)| t == term),
                "{term} is used but not defined"
            );
        }
    }
}
