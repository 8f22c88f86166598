//! `retrypolicy`: decide, explain and simulate retries from the command line.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use retrypolicy::{
    decide, explain, simulate, simulate_storm, Decision, Error, Policy, Request, RetryReason, Scenario,
    StormScenario,
};
use retrypolicy_wire::{from_json_str, from_json_value, parse_policy};
use serde::Deserialize;
use serde_json::{json, Map, Value};

mod demo;
mod hints;
mod table;

/// Retry decisions from the retrypolicy engine (Couchbase RFC 0049 rules), as JSON or plain text.
#[derive(Parser)]
#[command(name = "retrypolicy", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decide one request: JSON on stdin (or --input), JSONL for many, or flags; prints decision JSON.
    Decide(DecideArgs),
    /// The same decision as one plain sentence with its rule and spec section.
    Explain(DecideArgs),
    /// Replay a scenario file and print the retry timeline as a table with totals.
    Simulate(SimulateArgs),
    /// Replay a retry storm (many requests, a failure rate, an optional shared budget and
    /// breaker) and print the amplification: attempts that reached the server per request.
    #[command(
        after_help = r#"Example: 100 requests/s for 10 s, every attempt fails; with and without each budget kind
  echo '{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
        "reason": "KV_TEMPORARY_FAILURE", "requests_per_second": 100, "duration_ms": 10000,
        "latency_ms": 10}' | retrypolicy storm --compare"#
    )]
    Storm(StormArgs),
    /// MongoDB rules: one JSON document in (stdin or --input), its JSON answer out.
    #[command(subcommand)]
    Mongodb(MongoCommand),
    /// HTTP and saga rules: one JSON document in (stdin or --input), its JSON answer out.
    #[command(subcommand)]
    Http(HttpCommand),
    /// gRPC retry and hedging (gRFC A6): one JSON document in (stdin or --input), its JSON answer out.
    #[command(subcommand)]
    Grpc(GrpcCommand),
    /// The AWS SDKs' retry modes (standard, adaptive, legacy): one JSON document in (stdin or
    /// --input), its JSON answer out.
    #[command(subcommand)]
    Aws(AwsCommand),
    /// Replay a retry run through the run machine (the loop every runner follows): each event the
    /// host reports, and the step the machine answers, as a table (`--json` for the whole answer).
    #[command(after_help = r#"Example: an HTTP GET answered 503, then 200
  echo '{"run": {"rules": {"http": {"method": "GET"}}, "timeout_ms": 10000},
        "events": [{"event": "start", "at_ms": 0},
                   {"event": "attempt_ended", "at_ms": 5, "outcome": {"kind": "http", "status": 503}},
                   {"event": "wait_ended", "at_ms": 105},
                   {"event": "attempt_ended", "at_ms": 110, "outcome": {"kind": "http", "status": 200}}]}' | retrypolicy run"#)]
    Run(RunArgs),
    /// The bundled examples as a story: each scene in a sentence, its terms explained, the
    /// command that reproduces it, and a table (`--json`: each scene's answer as a JSON line).
    Demo(DemoArgs),
}

/// How to print the demo.
#[derive(Args)]
struct DemoArgs {
    /// One JSON line per scene (its title, command and answer) instead of the story.
    #[arg(long)]
    json: bool,
}

/// A run to replay.
#[derive(Args)]
struct RunArgs {
    /// Read the document from this file; `-` or nothing is stdin.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Print the JSON answer instead of the table.
    #[arg(long)]
    json: bool,
}

/// MongoDB decisions (the JSON shapes of spec-fixtures/README.md).
#[derive(Subcommand)]
enum MongoCommand {
    /// A failed attempt: retry after `delay_ms` or surface, with the labels the driver adds.
    #[command(after_help = r#"Example:
  echo '{"request": {"operation": {"name": "find"}}, "error": {"kind": "network"}}' | retrypolicy mongodb decide"#)]
    Decide(JsonArgs),
    /// A withTransaction run: the action the state machine returns for each event.
    #[command(after_help = r#"Example:
  echo '{"events": [{"event": "begin"}, {"event": "callback_returned", "session": "in_progress"},
        {"event": "commit_succeeded"}]}' | retrypolicy mongodb transaction"#)]
    Transaction(JsonArgs),
    /// Whether an operation is safe to retry, and the update paths that address array elements by index.
    #[command(after_help = r#"Example:
  echo '{"op": "updateOne", "filter": {"_id": 1}, "update": {"$inc": {"n": 1}}}' | retrypolicy mongodb idempotency"#)]
    Idempotency(JsonArgs),
    /// Seed 000's two-step pending-token form of a non-idempotent update (e.g. a `$inc`).
    #[command(after_help = r#"Example:
  echo '{"filter": {"_id": "2016-05-01"}, "update": {"$inc": {"counter": 1}}, "upsert": true,
        "token": {"$oid": "573a1390f29313caabcd4135"}}' | retrypolicy mongodb rewrite"#)]
    Rewrite(JsonArgs),
}

/// HTTP and saga decisions (the JSON shapes of spec-fixtures/README.md).
#[derive(Subcommand)]
enum HttpCommand {
    /// The retry loop's next move after one attempt: retry after a delay, or stop with an outcome.
    #[command(after_help = r#"Example:
  echo '{"loop": {"deadline_ms": 10000}, "state": {"attempts": 1, "elapsed_ms": 7500},
        "attempt": {"kind": "response", "status": 429, "retry_after": "3"}}' | retrypolicy http next"#)]
    Next(JsonArgs),
    /// The class of an HTTP status (`{"status": 503}`) or of a network error (`{"network_error": true}`).
    #[command(after_help = r#"Example:
  echo '{"status": 503}' | retrypolicy http classify"#)]
    Classify(JsonArgs),
    /// The delay a Retry-After value asks for (`{"value": "120"}`; a date needs `now_unix_ms`).
    #[command(after_help = r#"Example:
  echo '{"value": "Sun, 06 Nov 1994 08:49:37 GMT", "now_unix_ms": 784111747000}' | retrypolicy http retry-after"#)]
    RetryAfter(JsonArgs),
}

/// gRPC decisions (gRFC A6; the JSON shapes of spec-fixtures/README.md). Policies are gRPC's
/// own service-config JSON.
#[derive(Subcommand)]
enum GrpcCommand {
    /// A service config validated, and the policy one method gets (exact, service or default match).
    #[command(after_help = r#"Example:
  echo '{"service_config": {"methodConfig": [{"name": [{"service": "helloworld.Greeter"}],
        "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]},
        "service": "helloworld.Greeter", "method": "SayHello"}' | retrypolicy grpc config"#)]
    Config(JsonArgs),
    /// After one failed attempt of a retried call: retry after a delay, or fail, with the rule.
    #[command(
        after_help = r#"Example: the first attempt answered UNAVAILABLE, with a draw of 0.5
  echo '{"retry_policy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
        "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]},
        "state": {"attempts": 1}, "attempt": {"status": "UNAVAILABLE"}, "random": 0.5}' | retrypolicy grpc retry"#
    )]
    Retry(JsonArgs),
    /// A hedged call's events replayed: how many attempts to send at each, and how it ends.
    #[command(after_help = r#"Example:
  echo '{"hedging_policy": {"maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE"]},
        "events": [{"event": "start"}, {"event": "hedge_due"},
                   {"event": "attempt_ended", "attempt": {"status": "OK"}}]}' | retrypolicy grpc hedge"#)]
    Hedge(JsonArgs),
}

/// AWS SDK retry decisions (the JSON shapes of spec-fixtures/README.md).
#[derive(Subcommand)]
enum AwsCommand {
    /// After one failed attempt: retry after a delay, or return the error, with the rule.
    #[command(
        after_help = r#"Example: a 503 on the first attempt, standard mode, a draw of 0.5
  echo '{"attempts": 1, "error": {"status": 503}, "random": 0.5}' | retrypolicy aws retry"#
    )]
    Retry(JsonArgs),
    /// A sequence of failures and successes through the decisions and the retry quota.
    #[command(after_help = r#"Example: two 500s, then a success, with the 2026 behaviour
  echo '{"config": {"behavior": "2026"}, "events": [{"error": {"status": 500}, "random": 0.5},
        {"error": {"status": 500}, "random": 0.5}, {}]}' | retrypolicy aws run"#)]
    Run(JsonArgs),
    /// Adaptive mode's client-side rate limiter: each acquire (go, or wait) and response replayed.
    #[command(after_help = r#"Example: a throttled response, then two acquires
  echo '{"events": [{"at_ms": 0, "kind": "response", "throttled": true},
        {"at_ms": 10, "kind": "acquire"}, {"at_ms": 20, "kind": "acquire"}]}' | retrypolicy aws rate-limiter"#)]
    RateLimiter(JsonArgs),
}

/// One JSON document to answer.
#[derive(Args)]
struct JsonArgs {
    /// Read the document from this file; `-` or nothing is stdin.
    #[arg(long, short)]
    input: Option<PathBuf>,
}

/// Where a decision's input comes from.
#[derive(Args)]
struct DecideArgs {
    /// Read `{"request": {...}, "reason": "...", "policy": {...}}` (or JSONL: one per line) from
    /// this file; `-` is stdin. Without it and without --reason, stdin is read.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// A policy JSON file applied to every input that has no policy of its own.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// The retry reason (e.g. KV_LOCKED); selects flag mode.
    #[arg(long)]
    reason: Option<String>,
    /// Service: kv, query, analytics, search, views, cluster_manager, management.
    #[arg(long, default_value = "kv")]
    service: String,
    /// KV operation name (get, upsert, ...), for --service kv.
    #[arg(long)]
    operation: Option<String>,
    /// The query's readonly property (query, analytics).
    #[arg(long)]
    readonly: Option<bool>,
    /// HTTP method (cluster_manager, management).
    #[arg(long)]
    method: Option<String>,
    /// Retries already made.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    attempts: String,
    /// Milliseconds since the request started.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    elapsed_ms: String,
    /// The request timeout in milliseconds.
    #[arg(long, allow_hyphen_values = true)]
    timeout_ms: Option<String>,
    /// Override the idempotent-operation list.
    #[arg(long)]
    idempotent: Option<bool>,
    /// Per-request strategy override: best_effort or fail_fast.
    #[arg(long)]
    strategy: Option<String>,
    /// The random draw in [0, 1) for jitter.
    #[arg(long, allow_hyphen_values = true)]
    random: Option<String>,
}

/// A scenario to replay.
#[derive(Args)]
struct SimulateArgs {
    /// The scenario JSON file (see examples/scenarios/).
    scenario: PathBuf,
    /// Print the timeline as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// A storm to replay.
#[derive(Args)]
struct StormArgs {
    /// Read the storm (`spec-fixtures/README.md`, `simulate_storm`) from this file; `-` or nothing is stdin.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Replay it without a budget, then with each budget kind at its source's defaults (the
    /// storm's own budget is set aside; its breaker is kept), and print one row each.
    #[arg(long)]
    compare: bool,
    /// Print the reports as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// One decision's input, as JSON.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideInput {
    request: Request,
    reason: RetryReason,
    #[serde(default)]
    policy: Option<Policy>,
}

/// A failure of the command: bad input (exit 2) or an I/O problem (exit 1).
enum Failure {
    Input(String),
    Io(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        input_failure(&e, false)
    }
}

/// The report of a bad input: its code and message (in flag mode naming the flag, not the JSON
/// field), then what would correct it (near matches, the accepted names).
fn input_failure(e: &Error, flag_mode: bool) -> Failure {
    let mut message = e.to_string();
    let field = e.field();
    if flag_mode && !field.is_empty() {
        if let Some(rest) = message.strip_prefix(field) {
            message = format!("{}{rest}", hints::flag_of(field));
        }
    }
    let mut text = format!("{}: {message}", e.code());
    for hint in hints::hints(e) {
        text.push_str(&format!("\n  {hint}"));
    }
    Failure::Input(text)
}

/// Writes a diagnostic to stderr; a stderr that cannot be written (closed, full) is ignored, so
/// the remaining inputs are still decided.
fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "retrypolicy: {message}");
}

/// The most input the CLI reads from one file or stdin: a bigger document is refused before it is
/// held in memory (a JSONL stream that large can be split; SECURITY.md).
const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Everything `reader` yields, up to [`MAX_INPUT_BYTES`] (`what` names it in errors).
fn read_limited(reader: impl Read, what: &str) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Io(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::Input(format!(
            "input_too_large: {what} is over {} MiB: split it (decide reads JSONL, one document per line)",
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// A file's text, up to [`MAX_INPUT_BYTES`].
fn read_text(path: &std::path::Path, what: &str) -> Result<String, Failure> {
    let file = std::fs::File::open(path).map_err(|e| Failure::Io(format!("cannot read {what}: {e}")))?;
    String::from_utf8(read_limited(file, what)?)
        .map_err(|_| Failure::Input(format!("malformed_json: {what} is not UTF-8")))
}

/// The input document: the file at `path`, or stdin for none or `-`.
fn read_bytes(path: &Option<PathBuf>) -> Result<Vec<u8>, Failure> {
    match path.as_deref() {
        Some(p) if p.as_os_str() != "-" => {
            let file = std::fs::File::open(p).map_err(|e| Failure::Io(format!("cannot read input: {e}")))?;
            read_limited(file, "input")
        }
        _ => read_limited(std::io::stdin().lock(), "input"),
    }
}

fn load_policy(path: &Option<PathBuf>) -> Result<Policy, Failure> {
    match path {
        None => Ok(Policy::default()),
        Some(p) => {
            let text = read_text(p, &format!("policy {}", p.display()))?;
            parse_policy(&text)
                .map_err(|e| Failure::Input(format!("policy {}: {}: {e}", p.display(), e.code())))
        }
    }
}

/// A flag value as JSON: a number when it reads as one, else the text (the core then names the field).
fn flag_value(text: &str) -> Value {
    if let Ok(i) = text.parse::<i128>() {
        if let Ok(u) = u64::try_from(i) {
            return json!(u);
        }
        if let Ok(n) = i64::try_from(i) {
            return json!(n);
        }
    }
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => json!(f),
        _ => Value::String(text.to_owned()),
    }
}

fn inputs_from_flags(args: &DecideArgs, reason: &str) -> Value {
    let mut req = Map::new();
    req.insert("service".into(), json!(args.service));
    if let Some(op) = &args.operation {
        req.insert("operation".into(), json!(op));
    }
    if let Some(r) = args.readonly {
        req.insert("readonly".into(), json!(r));
    }
    if let Some(m) = &args.method {
        req.insert("method".into(), json!(m));
    }
    req.insert("attempts".into(), flag_value(&args.attempts));
    req.insert("elapsed_ms".into(), flag_value(&args.elapsed_ms));
    if let Some(t) = &args.timeout_ms {
        req.insert("timeout_ms".into(), flag_value(t));
    }
    if let Some(i) = args.idempotent {
        req.insert("idempotent".into(), json!(i));
    }
    if let Some(s) = &args.strategy {
        req.insert("strategy".into(), json!(s));
    }
    if let Some(r) = &args.random {
        req.insert("random".into(), flag_value(r));
    }
    json!({ "request": Value::Object(req), "reason": reason })
}

/// Parses one input value and decides it.
fn decide_value(value: &Value, default_policy: &Policy) -> Result<(Request, Decision), Error> {
    let input: DecideInput = from_json_value(value)?;
    let policy = input.policy.unwrap_or(*default_policy);
    policy.validate()?;
    let d = decide(&input.request, input.reason, &policy)?;
    Ok((input.request, d))
}

/// Runs decide or explain; returns whether every input was valid.
fn run_decide(args: &DecideArgs, explain_mode: bool, out: &mut impl Write) -> Result<bool, Failure> {
    let policy = load_policy(&args.policy)?;
    let render = |req: &Request, d: &Decision| {
        if explain_mode {
            explain(req, d)
        } else {
            d.to_json()
        }
    };
    let io = |e: std::io::Error| Failure::Io(e.to_string());
    if let (Some(reason), None) = (&args.reason, &args.input) {
        let (req, d) =
            decide_value(&inputs_from_flags(args, reason), &policy).map_err(|e| input_failure(&e, true))?;
        writeln!(out, "{}", render(&req, &d)).map_err(io)?;
        return Ok(true);
    }
    let bytes = read_bytes(&args.input)?;
    if bytes.trim_ascii().is_empty() {
        return Err(Failure::Input(
            "no input: pass JSON on stdin, --input FILE, or --reason with flags".into(),
        ));
    }
    // One JSON document (possibly pretty-printed), or JSONL: one document per line.
    if let Ok(value) = std::str::from_utf8(&bytes)
        .map_err(|_| ())
        .and_then(|text| from_json_str::<Value>(text).map_err(|_| ()))
    {
        let (req, d) = decide_value(&value, &policy)?;
        writeln!(out, "{}", render(&req, &d)).map_err(io)?;
        return Ok(true);
    }
    // A single document that does not parse is reported once (JSONL reports each line's error on
    // stdout too, so a stream's consumer sees it in place).
    if bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count()
        <= 1
    {
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| Failure::Input("malformed_json: input is not UTF-8".into()))?;
        from_json_str::<Value>(text)?;
    }
    let mut all_ok = true;
    for (n, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        // A line that is not UTF-8 is malformed JSON for that line alone.
        let result = std::str::from_utf8(line)
            .map_err(|e| Error::MalformedJson {
                message: "invalid UTF-8".to_owned(),
                line: 1,
                column: e.valid_up_to() + 1,
            })
            .and_then(from_json_str::<Value>)
            .and_then(|v| decide_value(&v, &policy));
        match result {
            Ok((req, d)) => writeln!(out, "{}", render(&req, &d)).map_err(io)?,
            Err(e) => {
                all_ok = false;
                let err = json!({"error": {"line": n + 1, "code": e.code(), "field": e.field(), "message": e.to_string()}});
                writeln!(out, "{err}").map_err(io)?;
                warn(&format!("line {}: {}: {e}", n + 1, e.code()));
            }
        }
    }
    Ok(all_ok)
}

fn run_simulate(args: &SimulateArgs, out: &mut impl Write) -> Result<bool, Failure> {
    let text = read_text(&args.scenario, &args.scenario.display().to_string())?;
    let scenario: Scenario = from_json_str(&text)
        .map_err(|e| Failure::Input(format!("{}: {}: {e}", args.scenario.display(), e.code())))?;
    let timeline = simulate(&scenario)?;
    let io = |e: std::io::Error| Failure::Io(e.to_string());
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&timeline).unwrap_or_default()).map_err(io)?;
    } else {
        write!(out, "{}", table::render(&scenario, &timeline)).map_err(io)?;
    }
    Ok(true)
}

fn run_storm(args: &StormArgs, out: &mut impl Write) -> Result<bool, Failure> {
    let bytes = read_bytes(&args.input)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Failure::Input("malformed_json: input is not UTF-8".into()))?;
    let storm: StormScenario = from_json_str(text)?;
    let storms = match args.compare {
        true => compare_budgets(&storm)?,
        false => vec![storm.clone()],
    };
    let reports = storms.iter().map(simulate_storm).collect::<Result<Vec<_>, _>>()?;
    let io = |e: std::io::Error| Failure::Io(e.to_string());
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&reports).unwrap_or_default()).map_err(io)?;
    } else {
        write!(out, "{}", table::render_storm(&storm, &reports)).map_err(io)?;
    }
    Ok(true)
}

/// The storm without a budget, then with each budget kind at its source's values (gRPC's bucket
/// has no default: gRFC A6's example).
fn compare_budgets(storm: &StormScenario) -> Result<Vec<StormScenario>, Error> {
    [
        None,
        Some(json!({"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1})),
        Some(json!({ "kind": "retry_quota" })),
        Some(json!({ "kind": "percentage" })),
    ]
    .into_iter()
    .map(|doc| {
        Ok(StormScenario {
            budget: doc.map(|d| from_json_value(&d)).transpose()?,
            ..storm.clone()
        })
    })
    .collect()
}

/// Answers one JSON document with the JSON API's `function`.
fn run_json(function: &str, args: &JsonArgs, out: &mut impl Write) -> Result<bool, Failure> {
    let bytes = read_bytes(&args.input)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Failure::Input("malformed_json: input is not UTF-8".into()))?;
    let mut value: Value = from_json_str(text)?;
    // The CLI is a host: it may read the clock a date in Retry-After needs.
    if function == "http_retry_after" {
        if let Some(doc) = value.as_object_mut() {
            if doc.get("now_unix_ms").is_none_or(Value::is_null) {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                doc.insert("now_unix_ms".into(), json!(now));
            }
        }
    }
    let answer = retrypolicy_wire::api::call(function, &value)?;
    writeln!(out, "{answer}").map_err(|e| Failure::Io(e.to_string()))?;
    Ok(true)
}

fn run_run(args: &RunArgs, out: &mut impl Write) -> Result<bool, Failure> {
    let bytes = read_bytes(&args.input)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Failure::Input("malformed_json: input is not UTF-8".into()))?;
    let value: Value = from_json_str(text)?;
    let answer = retrypolicy_wire::api::call("run", &value)?;
    let rendered = if args.json {
        answer.to_string()
    } else {
        table::render_run(&value, &answer)
    };
    writeln!(out, "{rendered}").map_err(|e| Failure::Io(e.to_string()))?;
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match &cli.command {
        Command::Decide(a) => run_decide(a, false, &mut out),
        Command::Explain(a) => run_decide(a, true, &mut out),
        Command::Simulate(a) => run_simulate(a, &mut out),
        Command::Storm(a) => run_storm(a, &mut out),
        Command::Mongodb(MongoCommand::Decide(a)) => run_json("mongodb_decide", a, &mut out),
        Command::Mongodb(MongoCommand::Transaction(a)) => run_json("mongodb_with_transaction", a, &mut out),
        Command::Mongodb(MongoCommand::Idempotency(a)) => run_json("mongodb_idempotency", a, &mut out),
        Command::Mongodb(MongoCommand::Rewrite(a)) => run_json("mongodb_pending_token_rewrite", a, &mut out),
        Command::Http(HttpCommand::Next(a)) => run_json("http_next", a, &mut out),
        Command::Http(HttpCommand::Classify(a)) => run_json("http_classify", a, &mut out),
        Command::Http(HttpCommand::RetryAfter(a)) => run_json("http_retry_after", a, &mut out),
        Command::Grpc(GrpcCommand::Config(a)) => run_json("grpc_service_config", a, &mut out),
        Command::Grpc(GrpcCommand::Retry(a)) => run_json("grpc_retry", a, &mut out),
        Command::Grpc(GrpcCommand::Hedge(a)) => run_json("grpc_hedge", a, &mut out),
        Command::Aws(AwsCommand::Retry(a)) => run_json("aws_retry", a, &mut out),
        Command::Aws(AwsCommand::Run(a)) => run_json("aws_retry_run", a, &mut out),
        Command::Aws(AwsCommand::RateLimiter(a)) => run_json("aws_rate_limiter_run", a, &mut out),
        Command::Run(a) => run_run(a, &mut out),
        Command::Demo(a) => demo::render(a.json)
            .map_err(Failure::from)
            .and_then(|text| write!(out, "{text}").map_err(|e| Failure::Io(e.to_string())))
            .map(|_| true),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(Failure::Input(msg)) => {
            warn(&msg);
            ExitCode::from(2)
        }
        Err(Failure::Io(msg)) => {
            warn(&msg);
            ExitCode::from(1)
        }
    }
}
