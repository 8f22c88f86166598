//! Conformance: replays MongoDB's own unified-format test suites (read at test time from
//! `../shared/peer-specs/mongodb`, or `PEER_SPECS_DIR`; never copied into this repository)
//! against the core's retry decisions.
//!
//! A small simulated deployment stands in for the server: it fires each test's fail points
//! (`failCommand`, `onPrimaryTransactionalWrite`), adds the labels a server adds, and keeps just
//! enough data (the `_id`s of each collection, a session's transaction) to raise the duplicate
//! key errors the tests expect. Each client has a connection pool: every attempt checks a
//! connection out (a CMAP `connectionCheckOutStartedEvent`), and a new connection runs the
//! handshake (`hello`, then `saslContinue` when the tests require auth), on which `failCommand`
//! fires too; a failed handshake is a `FailureKind::Handshake` error and sends no command.
//!
//! Every decision a driver makes (retry or not, how often, with which labels, which error
//! surfaces, what withTransaction does next) comes from the core: `decide_mongo`,
//! `surfaced_write_error` / `surfaced_read_error` and the `withTransaction` state machine. The
//! runner then compares the commands the test expects (names, order, started/succeeded/failed,
//! `txnNumber` presence, majority write concern on retried commits), the connection checkouts
//! it expects (CMAP `connectionCheckOutStartedEvent`s) and the error it expects (labels, code,
//! code name, client error or not).
//!
//! Each test is reported as passed, failed or skipped (with a one-line reason); the last line is
//! `N passed, N failed, N skipped`, and the process exits non-zero when N failed > 0. When the
//! specs folder is absent (or holds none of the suites) the run fails, naming the folder and
//! `PEER_SPECS_DIR`. `RETRYPOLICY_SKIP_CONFORMANCE=1` skips the suites on purpose (the run says
//! so, and why).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use retrypolicy::mongodb::errors::{FailureKind, MongoError, ServerKind, RETRYABLE_WRITE_ERROR};
use retrypolicy::mongodb::operations::{CommandClass, MongoOperation, OperationName};
use retrypolicy::mongodb::retry::{decide_mongo, MongoRequest};
use retrypolicy::mongodb::transaction::{
    step, SessionState, TransactionAction, TransactionEvent, TransactionState,
};
use retrypolicy::mongodb::{backpressure, errors};
use serde_json::Value;

/// The suites the issue names, relative to the mongodb folder: (folder, file-name prefix).
const SUITES: [(&str, &str); 5] = [
    ("transactions-convenient-api/tests/unified", ""),
    ("retryable-writes/tests/unified", ""),
    ("retryable-reads/tests/unified", ""),
    ("transactions/tests/unified", "error-labels"),
    ("client-backpressure/tests", ""),
];

/// Whole files outside a policy core, with the reason.
const SKIP_FILES: [(&str, &str); 1] = [(
    "backpressure-connection-checkin.json",
    "asserts that connections are checked back in to the pool between overload retries (CMAP \
     events): pool bookkeeping, not a retry decision",
)];

/// Single tests outside a policy core: (file, description, reason).
const SKIP_TESTS: [(&str, &str, &str); 5] = [
    (
        "transaction-options.json",
        "withTransaction inherits transaction options from client",
        OPTIONS_REASON,
    ),
    (
        "transaction-options.json",
        "withTransaction inherits transaction options from defaultTransactionOptions",
        OPTIONS_REASON,
    ),
    (
        "transaction-options.json",
        "withTransaction explicit transaction options",
        OPTIONS_REASON,
    ),
    (
        "transaction-options.json",
        "withTransaction explicit transaction options override defaultTransactionOptions",
        OPTIONS_REASON,
    ),
    (
        "transaction-options.json",
        "withTransaction explicit transaction options override client options",
        OPTIONS_REASON,
    ),
];

/// The CMAP events the simulated pool records: one per attempt, which the retry decision drives.
const MODELLED_CMAP_EVENTS: [&str; 1] = [CHECK_OUT_STARTED];
const CHECK_OUT_STARTED: &str = "connectionCheckOutStartedEvent";

const OPTIONS_REASON: &str = "transaction option inheritance (readConcern / writeConcern from the client, \
     defaultTransactionOptions, explicit options): not a retry decision";

/// Codes a server labels TransientTransactionError inside a transaction (from the tests: LockTimeout,
/// WriteConflict, SnapshotUnavailable, NoSuchTransaction, PreparedTransactionInProgress).
const SERVER_TRANSIENT_CODES: [i32; 5] = [24, 112, 246, 251, 267];
/// The simulated server's own copy of the retryable-writes code list (retryable-writes.md,
/// "RetryableWriteError Labels"), kept apart from the core's table so the suites can catch a
/// mistake in it.
const SERVER_RETRYABLE_WRITE_CODES: [i32; 12] =
    [11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262];
/// The server's not-primary / recovering codes (SDAM), which it labels TransientTransactionError
/// inside a transaction.
const SERVER_STATE_CHANGE_CODES: [i32; 7] = [11600, 11602, 10107, 13435, 13436, 189, 91];

/// Code names the tests assert with `errorCodeName`.
const CODE_NAMES: [(i32, &str); 4] = [
    (50, "MaxTimeMSExpired"),
    (79, "UnknownReplWriteConcern"),
    (100, "UnsatisfiableWriteConcern"),
    (11000, "DuplicateKey"),
];

enum Verdict {
    Pass,
    Fail(String),
    Skip(String),
}

fn main() {
    let from_env = std::env::var_os("PEER_SPECS_DIR");
    let named_by = if from_env.is_some() {
        "PEER_SPECS_DIR"
    } else {
        "the default: PEER_SPECS_DIR is unset"
    };
    let root = from_env
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/peer-specs/mongodb"));
    let missing = missing_specs(&root, named_by);
    if std::env::var_os(SKIP_VAR).is_some_and(|v| v == "1") {
        let state =
            missing.unwrap_or_else(|| format!("the MongoDB specs folder {} is present", root.display()));
        println!("conformance: skipped the MongoDB suites because {SKIP_VAR}=1; {state}");
        return;
    }
    if let Some(why) = missing {
        eprintln!(
            "conformance FAILED: {why}.\n\
             Set PEER_SPECS_DIR to a folder holding MongoDB's suites (mongodb/specifications, \
             source/{{{}}}), or set {SKIP_VAR}=1 to skip them on purpose.",
            SUITES
                .map(|(dir, _)| dir.split('/').next().unwrap_or(dir))
                .join(",")
        );
        std::process::exit(1);
    }
    let (mut passed, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut files = Vec::new();
    for (dir, prefix) in SUITES {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            println!("failed  {dir}: suite folder missing");
            failed += 1;
            continue;
        };
        let mut names: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(prefix))
            })
            .collect();
        names.sort();
        files.extend(names.into_iter().map(|p| (dir, p)));
    }
    for (dir, path) in files {
        let file_name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let label = format!("{dir}/{file_name}");
        let doc: Value = match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(d) => d,
            Err(e) => {
                println!("failed  {label}: unreadable: {e}");
                failed += 1;
                continue;
            }
        };
        let Some(tests) = doc["tests"].as_array() else {
            println!("failed  {label}: no tests array");
            failed += 1;
            continue;
        };
        for test in tests {
            let description = test["description"].as_str().unwrap_or("<no description>");
            let verdict = run_test(&file_name, &doc, test);
            match verdict {
                Verdict::Pass => {
                    passed += 1;
                    println!("passed  {label}: {description}");
                }
                Verdict::Fail(why) => {
                    failed += 1;
                    println!("failed  {label}: {description}: {why}");
                }
                Verdict::Skip(why) => {
                    skipped += 1;
                    println!("skipped {label}: {description}: {why}");
                    *reasons.entry(why).or_default() += 1;
                }
            }
        }
    }
    if !reasons.is_empty() {
        println!("skip reasons:");
        for (why, n) in &reasons {
            println!("  {n} x {why}");
        }
    }
    println!("{passed} passed, {failed} failed, {skipped} skipped");
    if failed > 0 {
        std::process::exit(1);
    }
}

/// The variable that skips the suites on purpose (for a machine without the specs).
const SKIP_VAR: &str = "RETRYPOLICY_SKIP_CONFORMANCE";

/// Why the suites cannot run from `root` (absent, not a folder, or holding none of the suite
/// folders), or `None` when at least one suite folder is there; `named_by` says where `root` came from.
fn missing_specs(root: &Path, named_by: &str) -> Option<String> {
    if !root.is_dir() {
        return Some(format!(
            "the MongoDB specs folder {} ({named_by}) is absent",
            root.display()
        ));
    }
    if SUITES.iter().all(|(dir, _)| !root.join(dir).is_dir()) {
        let dirs: Vec<&str> = SUITES.iter().map(|(dir, _)| *dir).collect();
        return Some(format!(
            "the MongoDB specs folder {} ({named_by}) holds none of the suite folders {}",
            root.display(),
            dirs.join(", ")
        ));
    }
    None
}

fn run_test(file_name: &str, doc: &Value, test: &Value) -> Verdict {
    let description = test["description"].as_str().unwrap_or_default();
    if let Some((_, why)) = SKIP_FILES.iter().find(|(f, _)| *f == file_name) {
        return Verdict::Skip((*why).to_owned());
    }
    if let Some((_, _, why)) = SKIP_TESTS
        .iter()
        .find(|(f, d, _)| *f == file_name && *d == description)
    {
        return Verdict::Skip((*why).to_owned());
    }
    if test["expectEvents"]
        .as_array()
        .is_some_and(|l| l.iter().any(asserts_unmodelled_events))
    {
        return Verdict::Skip(
            "asserts connection pool (CMAP) events other than checkout started, or SDAM events: \
             pool and topology bookkeeping, not a retry decision"
                .to_owned(),
        );
    }
    let mut sim = match Sim::new(doc, test) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail(e),
    };
    for op in test["operations"].as_array().into_iter().flatten() {
        let result = sim.run_operation(op);
        if let Err(why) = std::mem::replace(&mut sim.runner_error, Ok(())) {
            return Verdict::Fail(why);
        }
        if let Err(why) = check_outcome(op, &result) {
            return Verdict::Fail(why);
        }
        if let Some(why) = sim.check_failures.first() {
            return Verdict::Fail(why.clone());
        }
    }
    match sim.check_events(test) {
        Ok(()) => Verdict::Pass,
        Err(why) => Verdict::Fail(why),
    }
}

/// Whether an `expectEvents` entry asserts events the simulation does not record: SDAM events,
/// or CMAP events other than checkout started.
fn asserts_unmodelled_events(expected: &Value) -> bool {
    match expected["eventType"].as_str().unwrap_or("command") {
        "command" => false,
        "cmap" => expected["events"].as_array().into_iter().flatten().any(|e| {
            e.as_object()
                .and_then(|o| o.keys().next())
                .is_none_or(|k| !MODELLED_CMAP_EVENTS.contains(&k.as_str()))
        }),
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// The simulated deployment

#[derive(Debug, Clone)]
struct ClientCfg {
    retry_reads: bool,
    retry_writes: bool,
    socket_timeout_ms: Option<u64>,
    observe: Vec<String>,
    ignore: Vec<String>,
}

#[derive(Debug, Clone)]
enum Entity {
    Client,
    Database {
        client: String,
        db: String,
    },
    Collection {
        client: String,
        db: String,
        coll: String,
        w0: bool,
    },
    Session {
        client: String,
    },
    Bucket {
        client: String,
        db: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Started,
    Succeeded,
    Failed,
}

impl EventKind {
    fn key(self) -> &'static str {
        match self {
            EventKind::Started => "commandStartedEvent",
            EventKind::Succeeded => "commandSucceededEvent",
            EventKind::Failed => "commandFailedEvent",
        }
    }
}

#[derive(Debug, Clone)]
struct Event {
    kind: EventKind,
    name: String,
    txn_number: bool,
    majority: bool,
}

#[derive(Debug, Clone)]
enum Mode {
    Times(u64),
    AlwaysOn,
    Skip(u64),
}

#[derive(Debug, Clone)]
struct FailPoint {
    mode: Mode,
    data: Value,
}

impl FailPoint {
    /// Whether the fail point fires now, consuming one firing.
    fn fire(&mut self) -> bool {
        match &mut self.mode {
            Mode::AlwaysOn => true,
            Mode::Times(n) if *n > 0 => {
                *n -= 1;
                true
            }
            Mode::Times(_) => false,
            Mode::Skip(n) if *n > 0 => {
                *n -= 1;
                false
            }
            Mode::Skip(_) => true,
        }
    }
}

#[derive(Debug, Clone)]
struct Session {
    client: String,
    state: SessionState,
    pending: Vec<(String, String)>,
    commit_sent: bool,
    majority_next: bool,
}

/// An error as the test sees it: the core's error plus what the assertions look at.
#[derive(Debug, Clone)]
struct SimErr {
    err: MongoError,
    client_error: bool,
    message: String,
    code_name: Option<String>,
}

impl SimErr {
    fn client(message: &str) -> SimErr {
        SimErr {
            err: MongoError {
                kind: FailureKind::ServerSelection,
                ..MongoError::default()
            },
            client_error: true,
            message: message.to_owned(),
            code_name: None,
        }
    }

    /// A closed connection, as `kind`: `Network` after the command was sent, `Handshake` before.
    fn network(kind: FailureKind, message: &str) -> Box<SimErr> {
        Box::new(SimErr {
            err: MongoError {
                kind,
                ..MongoError::default()
            },
            client_error: true,
            message: message.to_owned(),
            code_name: None,
        })
    }
}

/// The name of `code`, when the tests assert it.
fn code_name_of(code: i32) -> Option<String> {
    CODE_NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, n)| (*n).to_owned())
}

/// The `errorLabels` a `failCommand` fail point names, if it names any.
fn explicit_labels(data: &Value) -> Option<Vec<String>> {
    data["errorLabels"]
        .as_array()
        .map(|l| l.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
}

/// The error of a `failCommand` that fired with `errorCode`, as `kind`; `server_labels` gives the
/// labels the server adds to the code when the fail point names none.
fn coded_error(
    data: &Value,
    kind: FailureKind,
    server_labels: impl FnOnce(i32) -> Vec<String>,
) -> Option<Box<SimErr>> {
    let code = data["errorCode"].as_i64()? as i32;
    Some(Box::new(SimErr {
        err: MongoError {
            kind,
            code: Some(code),
            labels: explicit_labels(data).unwrap_or_else(|| server_labels(code)),
            ..MongoError::default()
        },
        client_error: false,
        message: format!("failCommand error {code}"),
        code_name: code_name_of(code),
    }))
}

/// What an operation returns: nothing, or the error the test sees.
type Outcome = Result<(), Box<SimErr>>;

/// One wire command of an operation.
#[derive(Debug, Clone)]
struct Cmd {
    name: String,
    op: MongoOperation,
    statements: usize,
    inserts: Vec<(String, String)>,
}

/// A command's progress across its attempts (a retry resends the same transaction ID, so what
/// was executed stays executed).
#[derive(Debug, Default)]
struct CmdRun {
    executed: usize,
    applied: bool,
}

struct Sim {
    server: ServerKind,
    /// Whether the deployment requires authentication (the handshake then runs saslContinue).
    auth: bool,
    /// Idle connections in each client's pool.
    idle: HashMap<String, usize>,
    /// Each client's CMAP events, in order.
    cmap: HashMap<String, Vec<&'static str>>,
    clients: HashMap<String, ClientCfg>,
    entities: HashMap<String, Entity>,
    events: HashMap<String, Vec<Event>>,
    sessions: HashMap<String, Session>,
    fail_points: HashMap<String, FailPoint>,
    ids: HashMap<String, HashSet<String>>,
    counts: HashMap<String, usize>,
    next_id: u64,
    check_failures: Vec<String>,
    runner_error: Result<(), String>,
}

fn version_below_4_4(v: &str) -> bool {
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) < (4, 4)
}

fn id_key(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

impl Sim {
    fn new(doc: &Value, test: &Value) -> Result<Sim, String> {
        // The server kind follows the requirements: pre-4.4 only when every requirement caps the
        // version below 4.4; a mongos only when the only topology allowed is sharded.
        let reqs: Vec<&Value> = test["runOnRequirements"]
            .as_array()
            .or_else(|| doc["runOnRequirements"].as_array())
            .map(|l| l.iter().collect())
            .unwrap_or_default();
        let legacy = !reqs.is_empty()
            && reqs
                .iter()
                .all(|r| r["maxServerVersion"].as_str().is_some_and(version_below_4_4));
        let mongos_only = !reqs.is_empty()
            && reqs.iter().all(|r| {
                r["topologies"]
                    .as_array()
                    .is_some_and(|t| t.len() == 1 && t[0] == "sharded")
            });
        let server = match (legacy, mongos_only) {
            (false, _) => ServerKind::Modern,
            (true, false) => ServerKind::LegacyMongod,
            (true, true) => ServerKind::LegacyMongos,
        };
        // Auth is certainly on when every requirement of the file's or the test's list asks for
        // it (one requirement of each list must be met).
        let all_auth = |v: &Value| {
            v.as_array()
                .is_some_and(|l| !l.is_empty() && l.iter().all(|r| r["auth"].as_bool() == Some(true)))
        };
        let mut sim = Sim {
            server,
            auth: all_auth(&doc["runOnRequirements"]) || all_auth(&test["runOnRequirements"]),
            idle: HashMap::new(),
            cmap: HashMap::new(),
            clients: HashMap::new(),
            entities: HashMap::new(),
            events: HashMap::new(),
            sessions: HashMap::new(),
            fail_points: HashMap::new(),
            ids: HashMap::new(),
            counts: HashMap::new(),
            next_id: 0,
            check_failures: Vec::new(),
            runner_error: Ok(()),
        };
        sim.create_entities(&doc["createEntities"])?;
        for data in doc["initialData"].as_array().into_iter().flatten() {
            let ns = format!(
                "{}.{}",
                data["databaseName"].as_str().unwrap_or_default(),
                data["collectionName"].as_str().unwrap_or_default()
            );
            let docs = data["documents"].as_array().cloned().unwrap_or_default();
            *sim.counts.entry(ns.clone()).or_default() += docs.len();
            let set = sim.ids.entry(ns).or_default();
            for d in docs {
                if let Some(id) = d.get("_id") {
                    set.insert(id_key(id));
                }
            }
        }
        Ok(sim)
    }

    fn create_entities(&mut self, list: &Value) -> Result<(), String> {
        for e in list.as_array().into_iter().flatten() {
            let (kind, v) = e
                .as_object()
                .and_then(|m| m.iter().next())
                .ok_or("empty entity")?;
            let id = v["id"].as_str().ok_or("entity without id")?.to_owned();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            let entity = match kind.as_str() {
                "client" => {
                    let uri = &v["uriOptions"];
                    let strings = |k: &str| -> Vec<String> {
                        v[k].as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    };
                    self.clients.insert(
                        id.clone(),
                        ClientCfg {
                            retry_reads: uri["retryReads"].as_bool().unwrap_or(true),
                            retry_writes: uri["retryWrites"].as_bool().unwrap_or(true),
                            socket_timeout_ms: uri["socketTimeoutMS"].as_u64(),
                            observe: strings("observeEvents"),
                            ignore: strings("ignoreCommandMonitoringEvents"),
                        },
                    );
                    Entity::Client
                }
                "database" => Entity::Database {
                    client: s("client"),
                    db: s("databaseName"),
                },
                "collection" => {
                    let Some(Entity::Database { client, db }) = self.entities.get(&s("database")).cloned()
                    else {
                        return Err(format!("collection {id}: unknown database"));
                    };
                    Entity::Collection {
                        client,
                        db,
                        coll: s("collectionName"),
                        w0: v["collectionOptions"]["writeConcern"]["w"].as_i64() == Some(0),
                    }
                }
                "session" => {
                    self.sessions.insert(
                        id.clone(),
                        Session {
                            client: s("client"),
                            state: SessionState::NoTransaction,
                            pending: Vec::new(),
                            commit_sent: false,
                            majority_next: false,
                        },
                    );
                    Entity::Session { client: s("client") }
                }
                "bucket" => {
                    let Some(Entity::Database { client, db }) = self.entities.get(&s("database")).cloned()
                    else {
                        return Err(format!("bucket {id}: unknown database"));
                    };
                    Entity::Bucket { client, db }
                }
                other => return Err(format!("unsupported entity type {other}")),
            };
            self.entities.insert(id, entity);
        }
        Ok(())
    }

    fn client_of(&self, object: &str) -> Option<String> {
        match self.entities.get(object)? {
            Entity::Client => Some(object.to_owned()),
            Entity::Database { client, .. }
            | Entity::Collection { client, .. }
            | Entity::Session { client }
            | Entity::Bucket { client, .. } => Some(client.clone()),
        }
    }

    fn record(&mut self, client: &str, kind: EventKind, name: &str, txn_number: bool, majority: bool) {
        self.events.entry(client.to_owned()).or_default().push(Event {
            kind,
            name: name.to_owned(),
            txn_number,
            majority,
        });
    }

    /// The labels a server adds when the fail point names none.
    fn server_labels(&self, cmd: &Cmd, txn_number: bool, code: Option<i32>, wce: Option<i32>) -> Vec<String> {
        let mut labels = Vec::new();
        let on_write_list = |c: Option<i32>| c.is_some_and(|c| SERVER_RETRYABLE_WRITE_CODES.contains(&c));
        let txn_command = matches!(
            cmd.op.name,
            OperationName::CommitTransaction | OperationName::AbortTransaction
        );
        if cmd.op.in_transaction || txn_command {
            let state_change = code.is_some_and(|c| SERVER_STATE_CHANGE_CODES.contains(&c));
            if code.is_some_and(|c| SERVER_TRANSIENT_CODES.contains(&c)) || (!txn_command && state_change) {
                labels.push(errors::TRANSIENT_TRANSACTION_ERROR.to_owned());
            }
            if txn_command && self.server == ServerKind::Modern && (on_write_list(code) || on_write_list(wce))
            {
                labels.push(RETRYABLE_WRITE_ERROR.to_owned());
            }
        } else if txn_number
            && self.server == ServerKind::Modern
            && (on_write_list(code) || on_write_list(wce))
        {
            labels.push(RETRYABLE_WRITE_ERROR.to_owned());
        }
        labels
    }

    /// Applies a command's writes once: inserts check for duplicate `_id`s.
    fn apply(&mut self, cmd: &Cmd, run: &mut CmdRun, session: Option<&str>) -> Outcome {
        if run.applied {
            return Ok(());
        }
        run.applied = true;
        let in_txn = cmd.op.in_transaction;
        let mut seen: HashSet<(String, String)> = HashSet::new();
        for (ns, id) in &cmd.inserts {
            let pending_dup = session
                .and_then(|s| self.sessions.get(s))
                .is_some_and(|s| in_txn && s.pending.contains(&(ns.clone(), id.clone())));
            let committed_dup = self.ids.get(ns).is_some_and(|set| set.contains(id));
            if pending_dup || committed_dup || !seen.insert((ns.clone(), id.clone())) {
                return Err(Box::new(SimErr {
                    err: MongoError {
                        code: Some(errors::DUPLICATE_KEY),
                        ..MongoError::default()
                    },
                    client_error: false,
                    message: format!("E11000 duplicate key error collection: {ns} index: _id_ dup key: {id}"),
                    code_name: Some("DuplicateKey".to_owned()),
                }));
            }
            match session.and_then(|s| self.sessions.get_mut(s)) {
                Some(s) if in_txn => s.pending.push((ns.clone(), id.clone())),
                _ => {
                    self.ids.entry(ns.clone()).or_default().insert(id.clone());
                }
            }
        }
        match cmd.op.name {
            OperationName::CommitTransaction => {
                if let Some(s) = session.and_then(|s| self.sessions.get_mut(s)) {
                    for (ns, id) in std::mem::take(&mut s.pending) {
                        self.ids.entry(ns).or_default().insert(id);
                    }
                }
            }
            OperationName::AbortTransaction => {
                if let Some(s) = session.and_then(|s| self.sessions.get_mut(s)) {
                    s.pending.clear();
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The `failCommand` fail point's data, when it names `command` and fires now.
    fn fire_fail_command(&mut self, command: &str) -> Option<Value> {
        let fp = self.fail_points.get_mut("failCommand")?;
        let named = fp.data["failCommands"]
            .as_array()
            .is_some_and(|l| l.iter().any(|n| n.as_str() == Some(command)));
        (named && fp.fire()).then(|| fp.data.clone())
    }

    /// Checks a connection out of `client`'s pool: an idle one, or a new one established by the
    /// handshake (`hello`, then `saslContinue` when auth is on), on which `failCommand` fires too
    /// (`closeConnection` or `errorCode`): that failure is a `Handshake` error, and the connection
    /// is closed.
    fn check_out(&mut self, client: &str) -> Outcome {
        self.cmap
            .entry(client.to_owned())
            .or_default()
            .push(CHECK_OUT_STARTED);
        let idle = self.idle.entry(client.to_owned()).or_default();
        if *idle > 0 {
            *idle -= 1;
            return Ok(());
        }
        let handshake: &[&str] = if self.auth {
            &["hello", "saslContinue"]
        } else {
            &["hello"]
        };
        for command in handshake {
            let Some(data) = self.fire_fail_command(command) else {
                continue;
            };
            if data["closeConnection"].as_bool() == Some(true) {
                let message = format!("connection closed during the handshake ({command})");
                return Err(SimErr::network(FailureKind::Handshake, &message));
            }
            if let Some(e) = coded_error(&data, FailureKind::Handshake, |_| Vec::new()) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Returns an attempt's connection to `client`'s pool, unless a network error closed it.
    fn check_in(&mut self, client: &str, outcome: &Outcome) {
        if outcome
            .as_ref()
            .err()
            .is_none_or(|e| e.err.kind != FailureKind::Network)
        {
            *self.idle.entry(client.to_owned()).or_default() += 1;
        }
    }

    /// One attempt of `cmd` at the simulated server.
    fn attempt(
        &mut self,
        client: &str,
        cmd: &Cmd,
        run: &mut CmdRun,
        session: Option<&str>,
        txn_number: bool,
    ) -> Outcome {
        let network = || SimErr::network(FailureKind::Network, "connection closed");
        let socket_timeout = self.clients.get(client).and_then(|c| c.socket_timeout_ms);
        if let Some(data) = self.fire_fail_command(&cmd.name) {
            if data["closeConnection"].as_bool() == Some(true) {
                return Err(network());
            }
            if data["blockConnection"].as_bool() == Some(true) {
                let block = data["blockTimeMS"].as_u64().unwrap_or(0);
                if socket_timeout.is_some_and(|t| block >= t) {
                    return Err(network());
                }
            }
            let server_labels = |code| self.server_labels(cmd, txn_number, Some(code), None);
            if let Some(e) = coded_error(&data, FailureKind::Server, server_labels) {
                return Err(e);
            }
            if let Some(wce) = data["writeConcernError"].as_object() {
                let code = wce.get("code").and_then(Value::as_i64).unwrap_or(0) as i32;
                self.apply(cmd, run, session)?;
                let labels = explicit_labels(&data)
                    .unwrap_or_else(|| self.server_labels(cmd, txn_number, None, Some(code)));
                let code_name = wce
                    .get("codeName")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| code_name_of(code));
                return Err(Box::new(SimErr {
                    err: MongoError {
                        write_concern_code: Some(code),
                        labels,
                        ..MongoError::default()
                    },
                    client_error: false,
                    message: wce
                        .get("errmsg")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    code_name,
                }));
            }
        }
        // onPrimaryTransactionalWrite fires per statement of a retryable write (a command with a
        // transaction ID outside a transaction); a statement executed by an earlier attempt is
        // not executed again.
        if txn_number && !cmd.op.in_transaction {
            if let Some(fp) = self.fail_points.get("onPrimaryTransactionalWrite").cloned() {
                let mut fp = fp;
                let before_commit = fp.data.get("failBeforeCommitExceptionCode").is_some();
                let mut outcome = Ok(());
                while run.executed < cmd.statements {
                    if fp.fire() {
                        if !before_commit {
                            run.executed += 1;
                        }
                        outcome = Err(network());
                        break;
                    }
                    run.executed += 1;
                }
                self.fail_points
                    .insert("onPrimaryTransactionalWrite".to_owned(), fp);
                if run.executed > 0 {
                    self.apply(cmd, run, session)?;
                }
                return outcome;
            }
        }
        self.apply(cmd, run, session)
    }

    /// Executes one command through the core's retry loop; returns the surfaced error.
    fn execute(&mut self, client: &str, cmd: &Cmd, session: Option<&str>) -> Outcome {
        let cfg = self
            .clients
            .get(client)
            .cloned()
            .ok_or_else(|| SimErr::client("unknown client"))?;
        let eligibility =
            retrypolicy::mongodb::operations::eligibility(&cmd.op, cfg.retry_writes, cfg.retry_reads);
        let txn_number = cmd.op.in_transaction || eligibility.retryable_write;
        let mut request = MongoRequest::new(cmd.op);
        request.retry_writes = cfg.retry_writes;
        request.retry_reads = cfg.retry_reads;
        request.server = self.server;
        request.random = Some(0.5);
        let mut run = CmdRun::default();
        let mut failures: Vec<Box<SimErr>> = Vec::new();
        loop {
            let majority = if cmd.op.name == OperationName::CommitTransaction {
                session
                    .and_then(|s| self.sessions.get(s))
                    .is_some_and(|s| s.majority_next)
            } else {
                false
            };
            // An attempt whose checkout (handshake) failed sent nothing: no command events.
            let outcome = self.check_out(client).and_then(|()| {
                self.record(client, EventKind::Started, &cmd.name, txn_number, majority);
                let outcome = self.attempt(client, cmd, &mut run, session, txn_number);
                let done = if outcome.is_ok() {
                    EventKind::Succeeded
                } else {
                    EventKind::Failed
                };
                self.record(client, done, &cmd.name, txn_number, majority);
                self.check_in(client, &outcome);
                outcome
            });
            if cmd.op.name == OperationName::CommitTransaction {
                if let Some(s) = session.and_then(|s| self.sessions.get_mut(s)) {
                    s.commit_sent = true;
                    // transactions.md: every commit after the first uses w: majority, unless all
                    // failures so far were retryable overload errors.
                    let overload = outcome
                        .as_ref()
                        .err()
                        .is_some_and(|e| backpressure::is_retryable_overload_error(&e.err.labels));
                    if !overload {
                        s.majority_next = true;
                    }
                }
            }
            let Err(e) = outcome else {
                return Ok(());
            };
            let decision = match decide_mongo(&request, &e.err) {
                Ok(d) => d,
                Err(err) => {
                    self.runner_error = Err(format!("core rejected a request: {err}"));
                    return Err(e);
                }
            };
            let mut labelled = e;
            labelled.err.labels = decision.labels.clone();
            failures.push(labelled);
            if decision.is_retry() {
                request.attempts = decision.attempts;
                request.overloaded = decision.overloaded;
                continue;
            }
            let errs: Vec<MongoError> = failures.iter().map(|f| f.err.clone()).collect();
            let index = match cmd.op.class() {
                CommandClass::Read => errors::surfaced_read_error(&errs),
                _ => errors::surfaced_write_error(&errs),
            }
            .unwrap_or(0);
            return Err(failures.swap_remove(index));
        }
    }

    // ---- operations

    fn run_operation(&mut self, op: &Value) -> Outcome {
        let name = op["name"].as_str().unwrap_or_default();
        let object = op["object"].as_str().unwrap_or_default();
        let args = &op["arguments"];
        if object == "testRunner" {
            return match name {
                "failPoint" => {
                    let fp = &args["failPoint"];
                    let mode = match &fp["mode"] {
                        Value::String(s) if s == "alwaysOn" => Mode::AlwaysOn,
                        Value::String(_) => Mode::Times(0),
                        m => {
                            if let Some(n) = m["times"].as_u64() {
                                Mode::Times(n)
                            } else {
                                Mode::Skip(m["skip"].as_u64().unwrap_or(0))
                            }
                        }
                    };
                    // configureFailPoint runs through the client's pool (its command events are
                    // not observed: unified-test-format.md, "failPoint").
                    if let Some(client) = args["client"].as_str() {
                        match self.check_out(client) {
                            Ok(()) => self.check_in(client, &Ok(())),
                            Err(e) => self.runner_error = Err(format!("failPoint: {}", e.message)),
                        }
                    }
                    let key = fp["configureFailPoint"].as_str().unwrap_or_default().to_owned();
                    self.fail_points.insert(
                        key,
                        FailPoint {
                            mode,
                            data: fp["data"].clone(),
                        },
                    );
                    Ok(())
                }
                "createEntities" => {
                    if let Err(e) = self.create_entities(&args["entities"]) {
                        self.runner_error = Err(e);
                    }
                    Ok(())
                }
                other => {
                    self.runner_error = Err(format!("unsupported test runner operation {other}"));
                    Ok(())
                }
            };
        }
        if self.sessions.contains_key(object) {
            return self.session_operation(object, name, op);
        }
        let Some(client) = self.client_of(object) else {
            self.runner_error = Err(format!("unknown entity {object}"));
            return Ok(());
        };
        let session = args["session"].as_str().map(str::to_owned);
        let in_txn = match session.as_deref().and_then(|s| self.sessions.get_mut(s)) {
            Some(s) if matches!(s.state, SessionState::Starting | SessionState::InProgress) => {
                s.state = SessionState::InProgress;
                true
            }
            Some(s) => {
                if matches!(s.state, SessionState::Committed | SessionState::Aborted) {
                    s.state = SessionState::NoTransaction;
                }
                false
            }
            None => false,
        };
        let commands = match self.commands_for(object, name, args, in_txn) {
            Ok(c) => c,
            Err(e) => {
                self.runner_error = Err(e);
                return Ok(());
            }
        };
        for cmd in &commands {
            let result = self.execute(&client, cmd, session.as_deref());
            if let Err(e) = result {
                if cmd.name == "getMore" {
                    // The cursor is still open on the server: the driver kills it.
                    let kill = Cmd {
                        name: "killCursors".to_owned(),
                        op: MongoOperation::new(OperationName::RunCommand),
                        statements: 0,
                        inserts: Vec::new(),
                    };
                    let _ = self.execute(&client, &kill, session.as_deref());
                }
                return Err(e);
            }
        }
        Ok(())
    }

    fn namespace(&self, object: &str) -> (String, String) {
        match self.entities.get(object) {
            Some(Entity::Collection { db, coll, .. }) => (db.clone(), coll.clone()),
            Some(Entity::Database { db, .. }) => (db.clone(), String::new()),
            Some(Entity::Bucket { db, .. }) => (db.clone(), "fs".to_owned()),
            _ => (String::new(), String::new()),
        }
    }

    fn insert_id(&mut self, doc: &Value) -> String {
        match doc.get("_id") {
            Some(id) => id_key(id),
            None => {
                self.next_id += 1;
                format!("\"generated-{}\"", self.next_id)
            }
        }
    }

    /// The wire commands an operation sends, in order.
    fn commands_for(
        &mut self,
        object: &str,
        name: &str,
        args: &Value,
        in_txn: bool,
    ) -> Result<Vec<Cmd>, String> {
        let (db, coll) = self.namespace(object);
        let ns = format!("{db}.{coll}");
        let w0 = matches!(
            self.entities.get(object),
            Some(Entity::Collection { w0: true, .. })
        );
        let mk = |wire: &str, op: OperationName| Cmd {
            name: wire.to_owned(),
            op: MongoOperation {
                name: op,
                multi: false,
                unacknowledged: w0,
                write_stage: false,
                in_transaction: in_txn,
            },
            statements: 1,
            inserts: Vec::new(),
        };
        use OperationName as O;
        let cmd = match name {
            "insertOne" => {
                let id = self.insert_id(&args["document"]);
                let mut c = mk("insert", O::InsertOne);
                c.inserts.push((ns, id));
                c
            }
            "insertMany" => {
                let mut c = mk("insert", O::InsertMany);
                for d in args["documents"].as_array().into_iter().flatten() {
                    let id = self.insert_id(d);
                    c.inserts.push((ns.clone(), id));
                }
                c
            }
            "updateOne" => mk("update", O::UpdateOne),
            "replaceOne" => mk("update", O::ReplaceOne),
            "updateMany" => mk("update", O::UpdateMany),
            "deleteOne" => mk("delete", O::DeleteOne),
            "deleteMany" => mk("delete", O::DeleteMany),
            "findOneAndDelete" => mk("findAndModify", O::FindOneAndDelete),
            "findOneAndReplace" => mk("findAndModify", O::FindOneAndReplace),
            "findOneAndUpdate" => mk("findAndModify", O::FindOneAndUpdate),
            "bulkWrite" => return Ok(self.bulk_write(args, &ns, w0, in_txn)),
            "clientBulkWrite" => {
                let mut c = mk("bulkWrite", O::ClientBulkWrite);
                let models = args["models"].as_array().cloned().unwrap_or_default();
                c.statements = models.len();
                for m in &models {
                    let (kind, body) = m.as_object().and_then(|o| o.iter().next()).ok_or("empty model")?;
                    if kind == "updateMany" || kind == "deleteMany" {
                        c.op.multi = true;
                    }
                    if kind == "insertOne" {
                        let mns = body["namespace"].as_str().unwrap_or_default().to_owned();
                        let id = self.insert_id(&body["document"]);
                        c.inserts.push((mns, id));
                    }
                }
                c
            }
            "aggregate" => {
                let mut c = mk("aggregate", O::Aggregate);
                c.op.write_stage = args["pipeline"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|stage| stage.get("$out").is_some() || stage.get("$merge").is_some());
                c
            }
            "find" => {
                let mut cmds = vec![mk("find", O::Find)];
                if let Some(batch) = args["batchSize"].as_u64().filter(|b| *b > 0) {
                    let n = self.counts.get(&ns).copied().unwrap_or(0) as u64;
                    let get_mores = n.saturating_sub(batch).div_ceil(batch);
                    for _ in 0..get_mores {
                        cmds.push(mk("getMore", O::GetMore));
                    }
                }
                return Ok(cmds);
            }
            "findOne" => mk("find", O::FindOne),
            "distinct" => mk("distinct", O::Distinct),
            "count" => mk("count", O::Count),
            "estimatedDocumentCount" => mk("count", O::EstimatedDocumentCount),
            "countDocuments" => mk("aggregate", O::CountDocuments),
            "createChangeStream" => mk("aggregate", O::Watch),
            "listDatabases" | "listDatabaseObjects" => mk("listDatabases", O::ListDatabases),
            "listDatabaseNames" => mk("listDatabases", O::ListDatabaseNames),
            "listCollections" | "listCollectionObjects" => mk("listCollections", O::ListCollections),
            "listCollectionNames" => mk("listCollections", O::ListCollectionNames),
            "listIndexes" => mk("listIndexes", O::ListIndexes),
            "listIndexNames" => mk("listIndexes", O::ListIndexNames),
            "mapReduce" => mk("mapReduce", O::MapReduce),
            "download" | "downloadByName" => {
                // GridFS: find the files document, then the chunks; each find is a retryable read.
                return Ok(vec![mk("find", O::Find), mk("find", O::Find)]);
            }
            "runCommand" => {
                let wire = args["commandName"]
                    .as_str()
                    .ok_or("runCommand without commandName")?;
                mk(wire, O::RunCommand)
            }
            "createIndex" => mk("createIndexes", O::CreateIndexes),
            "dropIndex" | "dropIndexes" => mk("dropIndexes", O::DropIndexes),
            other => return Err(format!("operation {other} is not modelled")),
        };
        Ok(vec![cmd])
    }

    /// Collection bulkWrite: one command per run of same-type requests; a batch holding an
    /// updateMany / deleteMany is not retryable.
    fn bulk_write(&mut self, args: &Value, ns: &str, w0: bool, in_txn: bool) -> Vec<Cmd> {
        let mut out: Vec<Cmd> = Vec::new();
        for r in args["requests"].as_array().into_iter().flatten() {
            let Some((kind, body)) = r.as_object().and_then(|o| o.iter().next()) else {
                continue;
            };
            let wire = match kind.as_str() {
                "insertOne" => "insert",
                "deleteOne" | "deleteMany" => "delete",
                _ => "update",
            };
            if out.last().is_none_or(|c| c.name != wire) {
                out.push(Cmd {
                    name: wire.to_owned(),
                    op: MongoOperation {
                        name: OperationName::BulkWrite,
                        multi: false,
                        unacknowledged: w0,
                        write_stage: false,
                        in_transaction: in_txn,
                    },
                    statements: 0,
                    inserts: Vec::new(),
                });
            }
            let id = (kind == "insertOne").then(|| self.insert_id(&body["document"]));
            let last = out.last_mut().expect("pushed above");
            // An insert command is one statement: its documents commit together.
            if wire != "insert" || last.statements == 0 {
                last.statements += 1;
            }
            if kind == "updateMany" || kind == "deleteMany" {
                last.op.multi = true;
            }
            if let Some(id) = id {
                last.inserts.push((ns.to_owned(), id));
            }
        }
        out
    }

    // ---- sessions and transactions

    fn session_operation(&mut self, sid: &str, name: &str, op: &Value) -> Outcome {
        match name {
            "startTransaction" => self.start_transaction(sid),
            "commitTransaction" => self.commit(sid),
            "abortTransaction" => self.abort(sid),
            "withTransaction" => self.with_transaction(
                sid,
                op["arguments"]["callback"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            ),
            other => {
                self.runner_error = Err(format!("unsupported session operation {other}"));
                Ok(())
            }
        }
    }

    fn start_transaction(&mut self, sid: &str) -> Outcome {
        let s = self
            .sessions
            .get_mut(sid)
            .ok_or_else(|| SimErr::client("unknown session"))?;
        if matches!(s.state, SessionState::Starting | SessionState::InProgress) {
            return Err(SimErr::client("Transaction already in progress").into());
        }
        s.state = SessionState::Starting;
        s.pending.clear();
        s.commit_sent = false;
        s.majority_next = false;
        Ok(())
    }

    fn txn_command(&self, sid: &str, name: OperationName) -> (String, Cmd) {
        let client = self
            .sessions
            .get(sid)
            .map(|s| s.client.clone())
            .unwrap_or_default();
        let wire = if name == OperationName::CommitTransaction {
            "commitTransaction"
        } else {
            "abortTransaction"
        };
        let mut op = MongoOperation::new(name);
        op.in_transaction = true;
        (
            client,
            Cmd {
                name: wire.to_owned(),
                op,
                statements: 1,
                inserts: Vec::new(),
            },
        )
    }

    fn commit(&mut self, sid: &str) -> Outcome {
        let s = self
            .sessions
            .get_mut(sid)
            .ok_or_else(|| SimErr::client("unknown session"))?;
        match s.state {
            SessionState::NoTransaction => return Err(SimErr::client("No transaction started").into()),
            SessionState::Aborted => {
                return Err(
                    SimErr::client("Cannot call commitTransaction after calling abortTransaction").into(),
                )
            }
            SessionState::Starting => {
                s.state = SessionState::Committed;
                return Ok(());
            }
            SessionState::Committed if !s.commit_sent => return Ok(()),
            SessionState::InProgress | SessionState::Committed => {}
        }
        s.state = SessionState::Committed;
        let (client, cmd) = self.txn_command(sid, OperationName::CommitTransaction);
        self.execute(&client, &cmd, Some(sid))
    }

    fn abort(&mut self, sid: &str) -> Outcome {
        let s = self
            .sessions
            .get_mut(sid)
            .ok_or_else(|| SimErr::client("unknown session"))?;
        match s.state {
            SessionState::Starting => {
                s.state = SessionState::Aborted;
                Ok(())
            }
            SessionState::InProgress => {
                s.state = SessionState::Aborted;
                let (client, cmd) = self.txn_command(sid, OperationName::AbortTransaction);
                // transactions.md: abortTransaction errors are never reported.
                let _ = self.execute(&client, &cmd, Some(sid));
                Ok(())
            }
            SessionState::NoTransaction => Err(SimErr::client("No transaction started").into()),
            SessionState::Committed => {
                Err(SimErr::client("Cannot call abortTransaction after calling commitTransaction").into())
            }
            SessionState::Aborted => Err(SimErr::client("Cannot call abortTransaction twice").into()),
        }
    }

    fn session_state(&self, sid: &str) -> SessionState {
        self.sessions
            .get(sid)
            .map(|s| s.state)
            .unwrap_or(SessionState::NoTransaction)
    }

    /// withTransaction driven by the core's state machine: the runner performs each action and
    /// reports what happened as the next event.
    fn with_transaction(&mut self, sid: &str, callback: Vec<Value>) -> Outcome {
        let mut state = TransactionState::new(None);
        let mut event = TransactionEvent::Begin;
        let mut last: Option<Box<SimErr>> = None;
        for _ in 0..1000 {
            let (next, action) = match step(&state, &event) {
                Ok(x) => x,
                Err(e) => {
                    self.runner_error = Err(format!("withTransaction state machine: {e}"));
                    return Ok(());
                }
            };
            state = next;
            event = match action {
                TransactionAction::StartTransaction | TransactionAction::RetryTransaction { .. } => {
                    if let TransactionAction::RetryTransaction {
                        abort_first: true, ..
                    } = action
                    {
                        let _ = self.abort(sid);
                    }
                    match self.start_transaction(sid) {
                        Err(e) => {
                            let error = e.err.clone();
                            last = Some(e);
                            TransactionEvent::StartFailed { error }
                        }
                        Ok(()) => {
                            let mut raised = None;
                            for op in &callback {
                                let r = self.run_operation(op);
                                if let Err(why) = check_outcome(op, &r) {
                                    self.check_failures.push(format!("in the callback: {why}"));
                                }
                                if let Err(e) = r {
                                    raised = Some(e);
                                    break;
                                }
                            }
                            let session = self.session_state(sid);
                            match raised {
                                None => TransactionEvent::CallbackReturned { session },
                                Some(e) => {
                                    let error = e.err.clone();
                                    last = Some(e);
                                    TransactionEvent::CallbackRaised {
                                        session,
                                        error,
                                        elapsed_ms: 0,
                                        random: Some(0.5),
                                    }
                                }
                            }
                        }
                    }
                }
                TransactionAction::Commit | TransactionAction::RetryCommit { .. } => match self.commit(sid) {
                    Ok(()) => TransactionEvent::CommitSucceeded,
                    Err(e) => {
                        let error = e.err.clone();
                        last = Some(e);
                        TransactionEvent::CommitFailed {
                            error,
                            elapsed_ms: 0,
                            random: Some(0.5),
                        }
                    }
                },
                TransactionAction::Raise { abort_first, .. } => {
                    if abort_first {
                        let _ = self.abort(sid);
                    }
                    return Err(last.unwrap_or_else(|| SimErr::client("withTransaction raised").into()));
                }
                TransactionAction::RaiseTimeout {
                    abort_first, labels, ..
                } => {
                    if abort_first {
                        let _ = self.abort(sid);
                    }
                    let mut e = last.unwrap_or_else(|| SimErr::client("timeout").into());
                    e.err.labels = labels;
                    e.client_error = true;
                    return Err(e);
                }
                TransactionAction::Return => return Ok(()),
            };
        }
        self.runner_error = Err("withTransaction did not finish within 1000 steps".to_owned());
        Ok(())
    }

    // ---- expectations

    fn check_events(&self, test: &Value) -> Result<(), String> {
        for expected in test["expectEvents"].as_array().into_iter().flatten() {
            let client = expected["client"].as_str().unwrap_or_default();
            let cfg = self
                .clients
                .get(client)
                .ok_or(format!("unknown client {client}"))?;
            if expected["eventType"].as_str() == Some("cmap") {
                self.check_cmap_events(client, cfg, expected)?;
                continue;
            }
            let got: Vec<&Event> = self
                .events
                .get(client)
                .into_iter()
                .flatten()
                .filter(|e| cfg.observe.iter().any(|o| o == e.kind.key()) && !cfg.ignore.contains(&e.name))
                .collect();
            let want = expected["events"].as_array().cloned().unwrap_or_default();
            let names = |l: &[&Event]| {
                l.iter()
                    .map(|e| format!("{}:{}", &e.kind.key()[7..e.kind.key().len() - 5], e.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if got.len() != want.len() {
                return Err(format!(
                    "{client}: expected {} events, got {} [{}]",
                    want.len(),
                    got.len(),
                    names(&got)
                ));
            }
            for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                let (kind, body) = w.as_object().and_then(|o| o.iter().next()).ok_or("empty event")?;
                // Without commandName, the command document's first key names it; JSON objects
                // are read unordered here, so the recorded name must be one of its keys.
                let wanted_name = body["commandName"].as_str().map(str::to_owned);
                let name_ok = match &wanted_name {
                    Some(n) => *n == g.name,
                    None => body["command"].get(&g.name).is_some(),
                };
                if kind != g.kind.key() || !name_ok {
                    return Err(format!(
                        "{client} event {i}: expected {kind} {wanted_name:?}, got [{}]",
                        names(&got)
                    ));
                }
                let command = &body["command"];
                match &command["txnNumber"] {
                    Value::Null => {}
                    v => {
                        let want_txn = v.get("$$exists").and_then(Value::as_bool).unwrap_or(true);
                        if want_txn != g.txn_number {
                            return Err(format!(
                                "{client} event {i} ({}): txnNumber expected {want_txn}, got {}",
                                g.name, g.txn_number
                            ));
                        }
                    }
                }
                if g.name == "commitTransaction" {
                    let wc = &command["writeConcern"];
                    let absent = wc.get("$$exists").and_then(Value::as_bool) == Some(false);
                    let majority = wc["w"].as_str() == Some("majority");
                    // A retried commit must carry w: majority. (A first commit may carry it too,
                    // when the transaction's own write concern is majority: not checked.)
                    let names_w = wc.get("w").is_some();
                    if g.majority && (absent || (names_w && !majority)) {
                        return Err(format!(
                            "{client} event {i}: the core retried this commit (w: majority) but the test expects {wc}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Compares `client`'s observed CMAP events with `expected`, by name and in order.
    fn check_cmap_events(&self, client: &str, cfg: &ClientCfg, expected: &Value) -> Result<(), String> {
        let got: Vec<&str> = self
            .cmap
            .get(client)
            .into_iter()
            .flatten()
            .copied()
            .filter(|e| cfg.observe.iter().any(|o| o == e))
            .collect();
        let want: Vec<&str> = expected["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_object()?.keys().next().map(String::as_str))
            .collect();
        let ok = if expected["ignoreExtraEvents"].as_bool() == Some(true) {
            got.starts_with(&want)
        } else {
            got == want
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{client}: expected CMAP events [{}], got [{}]",
                want.join(", "),
                got.join(", ")
            ))
        }
    }
}

fn code_name(e: &SimErr) -> Option<String> {
    e.code_name
        .clone()
        .or_else(|| code_name_of(e.err.code.or(e.err.write_concern_code)?))
}

/// Checks an operation's result against its `expectError` / `expectResult`.
fn check_outcome(op: &Value, result: &Outcome) -> Result<(), String> {
    let name = op["name"].as_str().unwrap_or_default();
    if op["ignoreResultAndError"].as_bool() == Some(true) {
        return Ok(());
    }
    let Some(expect) = op.get("expectError") else {
        return match result {
            Ok(()) => Ok(()),
            Err(e) => Err(format!(
                "{name}: unexpected error code {:?} labels {:?} ({})",
                e.err.code.or(e.err.write_concern_code),
                e.err.labels,
                e.message
            )),
        };
    };
    let Err(e) = result else {
        return Err(format!("{name}: expected an error, the operation succeeded"));
    };
    if let Some(client) = expect["isClientError"].as_bool() {
        if client != e.client_error {
            return Err(format!(
                "{name}: isClientError expected {client}, got {}",
                e.client_error
            ));
        }
    }
    for label in expect["errorLabelsContain"].as_array().into_iter().flatten() {
        let label = label.as_str().unwrap_or_default();
        if !e.err.has_label(label) {
            return Err(format!("{name}: label {label} missing from {:?}", e.err.labels));
        }
    }
    for label in expect["errorLabelsOmit"].as_array().into_iter().flatten() {
        let label = label.as_str().unwrap_or_default();
        if e.err.has_label(label) {
            return Err(format!("{name}: label {label} present in {:?}", e.err.labels));
        }
    }
    if let Some(code) = expect["errorCode"].as_i64() {
        let got = e.err.code.or(e.err.write_concern_code);
        if got != Some(code as i32) {
            return Err(format!("{name}: error code expected {code}, got {got:?}"));
        }
    }
    if let Some(want) = expect["errorCodeName"].as_str() {
        let got = code_name(e);
        if got.as_deref() != Some(want) {
            return Err(format!("{name}: code name expected {want}, got {got:?}"));
        }
    }
    if let Some(text) = expect["errorContains"].as_str() {
        if !e.message.to_lowercase().contains(&text.to_lowercase()) {
            return Err(format!(
                "{name}: message {:?} does not contain {text:?}",
                e.message
            ));
        }
    }
    if let Some(list) = expect["writeConcernErrors"].as_array() {
        let want = list.first().and_then(|w| w["code"].as_i64()).map(|c| c as i32);
        if want != e.err.write_concern_code {
            return Err(format!(
                "{name}: writeConcernError code expected {want:?}, got {:?}",
                e.err.write_concern_code
            ));
        }
    }
    Ok(())
}
