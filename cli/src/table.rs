//! The timeline as a readable table with totals.

use std::fmt::Write;

use retrypolicy::{Decision, Ending, Scenario, StormReport, StormScenario, Timeline};
use serde_json::Value;

/// Renders the scenario's timeline: one row per attempt, then the totals.
pub fn render(scenario: &Scenario, t: &Timeline) -> String {
    let mut s = String::new();
    let title = if scenario.name.is_empty() {
        "scenario"
    } else {
        &scenario.name
    };
    let _ = writeln!(s, "{title}");
    if !scenario.description.is_empty() {
        let _ = writeln!(s, "  {}", scenario.description);
    }
    s.push_str(&timeline(scenario, t));
    s
}

/// The scenario's timeline without its title: one row per attempt, then the totals.
pub fn timeline(scenario: &Scenario, t: &Timeline) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  {:>3}  {:>8}  {:>8}  {:<30}  {:<40}  {:>7}",
        "#", "sent ms", "done ms", "outcome", "decision (rule)", "wait ms"
    );
    for step in &t.steps {
        let outcome = step
            .reason
            .map(|r| r.name().to_owned())
            .unwrap_or_else(|| "success".into());
        let (decision, wait) = match &step.decision {
            None => (String::new(), String::new()),
            Some(Decision::Retry(r)) => (
                format!(
                    "retry{} ({})",
                    if r.then_cancel { ", then cancel" } else { "" },
                    r.rule.name()
                ),
                format!("{}{}", r.delay_ms, if r.capped { "*" } else { "" }),
            ),
            Some(Decision::NoRetry(n)) => (format!("fail ({})", n.rule.name()), String::new()),
        };
        let _ = writeln!(
            s,
            "  {:>3}  {:>8}  {:>8}  {:<30}  {:<40}  {:>7}",
            step.attempt, step.sent_at_ms, step.done_at_ms, outcome, decision, wait
        );
    }
    let ending = match t.ending {
        Ending::Succeeded => "succeeded",
        Ending::Failed => "failed (not retried)",
        Ending::TimedOut => "timed out",
        Ending::AttemptLimit => "stopped at the attempt limit",
    };
    let _ = writeln!(
        s,
        "  => {ending} after {} attempt{}: {} ms in all, {} ms waiting, timeout {} ms{}",
        t.steps.len(),
        if t.steps.len() == 1 { "" } else { "s" },
        t.total_ms,
        t.waited_ms,
        scenario.request.timeout_ms,
        if t.steps
            .iter()
            .any(|s| matches!(s.decision, Some(Decision::Retry(r)) if r.capped))
        {
            " (* capped to the timeout)"
        } else {
            ""
        }
    );
    s
}

/// Renders storm reports: the storm in one line, then one row per report (its budget kind).
pub fn render_storm(storm: &StormScenario, reports: &[StormReport]) -> String {
    let mut s = String::new();
    let failing = if storm.failure_rate >= 1.0 {
        "every attempt fails".to_owned()
    } else {
        format!("{:.0}% of attempts fail", storm.failure_rate * 100.0)
    };
    let _ = writeln!(
        s,
        "storm: {} requests/s for {} ms, {failing} ({}), {} ms per attempt, timeout {} ms{}",
        storm.requests_per_second,
        storm.duration_ms,
        storm.reason.name(),
        storm.latency_ms,
        storm.request.timeout_ms,
        if storm.breaker.is_some() {
            ", with a circuit breaker"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "  {:<14}  {:>8}  {:>13}  {:>13}  {:>15}  {:>18}",
        "budget", "requests", "attempts sent", "amplification", "budget refusals", "breaker rejections"
    );
    for r in reports {
        let _ = writeln!(
            s,
            "  {:<14}  {:>8}  {:>13}  {:>12.2}x  {:>15}  {:>18}",
            r.budget_kind.unwrap_or("none"),
            r.requests,
            r.attempts_sent,
            r.amplification,
            r.budget_refusals,
            r.breaker_rejections
        );
    }
    s
}

/// A replayed run as a table: each event the host reported (its time and outcome) beside the step
/// the machine answered, then how the run ended.
pub fn render_run(input: &serde_json::Value, answer: &serde_json::Value) -> String {
    let empty = Vec::new();
    let events = input["events"].as_array().unwrap_or(&empty);
    let steps = answer["steps"].as_array().unwrap_or(&empty);
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut s = format!(
        "  {:>8}  {:<14} {:<26} {:<7} {:>7} {:>9}  {:<10} {}\n",
        "at ms", "event", "outcome", "step", "attempt", "wait ms", "end", "rule"
    );
    for (e, step) in events.iter().zip(steps) {
        let outcome = match &e["outcome"] {
            serde_json::Value::Null => String::new(),
            o => {
                let mut t = text(&o["kind"]);
                for key in ["status", "reason", "retry_after", "sent"] {
                    if !o[key].is_null() {
                        t.push_str(&format!(" {}", text(&o[key])));
                    }
                }
                t
            }
        };
        s.push_str(&format!(
            "  {:>8}  {:<14} {:<26} {:<7} {:>7} {:>9}  {:<10} {}\n",
            text(&e["at_ms"]),
            text(&e["event"]),
            outcome,
            text(&step["action"]),
            text(&step["attempt"]),
            text(&step["delay_ms"]),
            text(&step["end"]),
            text(&step["rule"]),
        ));
    }
    s.push_str(&format!(
        "  {} attempts sent; {}",
        text(&answer["attempts_sent"]),
        match text(&answer["end"]).as_str() {
            "" => "the run is not over".to_owned(),
            end => format!("ended: {end}"),
        }
    ));
    s
}

/// A value as table text: a string as is, null as nothing, anything else as compact JSON.
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A withTransaction run: each event (with its error's labels) beside the action answered.
pub fn transaction(input: &Value, answer: &Value) -> String {
    let empty = Vec::new();
    let events = input["events"].as_array().unwrap_or(&empty);
    let actions = answer["actions"].as_array().unwrap_or(&empty);
    let mut s = format!("  {:<18}  {:<44}  {}\n", "event", "error", "action");
    for (e, a) in events.iter().zip(actions) {
        let error = &e["error"];
        let error = match error {
            Value::Null => String::new(),
            _ => {
                let mut t = text(&error["kind"]);
                if !error["code"].is_null() {
                    t.push_str(&format!(" {}", text(&error["code"])));
                }
                for l in error["labels"].as_array().unwrap_or(&empty) {
                    t.push_str(&format!(" {}", text(l)));
                }
                t
            }
        };
        let _ = writeln!(s, "  {:<18}  {:<44}  {}", text(&e["event"]), error, text(a));
    }
    let backoffs = answer["backoffs_ms"].as_array().unwrap_or(&empty);
    let _ = writeln!(
        s,
        "  => {} after {} transaction attempt{}; backoff before a retried transaction: {} ms",
        text(&answer["last"]["action"]),
        text(&answer["state"]["transaction_attempt"]),
        if answer["state"]["transaction_attempt"] == 1 {
            ""
        } else {
            "s"
        },
        backoffs.iter().map(text).collect::<Vec<_>>().join(", ")
    );
    s
}

/// Seed 000's rewrite: the original update, then its two idempotent steps, each filter and update.
pub fn rewrite(input: &Value, answer: &Value) -> String {
    let mut s = String::new();
    for (label, doc) in [
        ("original", input),
        ("step 1", &answer["step1"]),
        ("step 2", &answer["step2"]),
    ] {
        let _ = writeln!(s, "  {:<9} filter  {}", label, text(&doc["filter"]));
        let _ = writeln!(s, "  {:<9} update  {}", "", text(&doc["update"]));
    }
    let _ = writeln!(
        s,
        "  cleanup (a step 2 never sent): the aggregation {}",
        text(&answer["cleanup_pipeline"])
    );
    s
}

/// An update's idempotency verdict and each positional hazard with its safer path.
pub fn hazards(answer: &Value) -> String {
    let empty = Vec::new();
    let mut s = format!(
        "  idempotent by its operators: {} (rule {})\n",
        if answer["idempotent"] == true { "yes" } else { "no" },
        text(&answer["rule"])
    );
    let _ = writeln!(
        s,
        "  {:<16}  {:<10}  {:<16}  why",
        "path", "operator", "safer path"
    );
    for h in answer["hazards"].as_array().unwrap_or(&empty) {
        let _ = writeln!(
            s,
            "  {:<16}  {:<10}  {:<16}  element {} of {} by index ({})",
            text(&h["path"]),
            text(&h["operator"]),
            text(&h["suggested_path"]),
            text(&h["index"]),
            text(&h["array_path"]),
            text(&h["section"])
        );
    }
    s
}

/// One HTTP loop step: the attempt's answer, the time left, and the loop's decision.
pub fn http_step(input: &Value, answer: &Value) -> String {
    let state = &input["state"];
    let attempt = &input["attempt"];
    let mut s = format!(
        "  {:>7}  {:>10}  {:>11}  {:<8}  {:>14}  {}\n",
        "attempt", "elapsed ms", "deadline ms", "status", "retry-after ms", "decision (rule)"
    );
    let _ = writeln!(
        s,
        "  {:>7}  {:>10}  {:>11}  {:<8}  {:>14}  {} ({})",
        text(&state["attempts"]),
        text(&state["elapsed_ms"]),
        text(&input["loop"]["deadline_ms"]),
        text(&attempt["status"]),
        text(&answer["retry_after_ms"]),
        text(&answer["action"]),
        text(&answer["rule"])
    );
    s
}

/// A hedged gRPC call: each event (with the attempt's status and pushback) beside how many
/// attempts go now, when the next hedge is due, and the rule; then how the call ended.
pub fn hedge(input: &Value, answer: &Value) -> String {
    let empty = Vec::new();
    let events = input["events"].as_array().unwrap_or(&empty);
    let steps = answer["steps"].as_array().unwrap_or(&empty);
    let mut s = format!(
        "  {:>5}  {:<14}  {:<22}  {:>4}  {:>13}  {}\n",
        "at ms", "event", "attempt", "send", "next hedge ms", "rule"
    );
    for (e, step) in events.iter().zip(steps) {
        let a = &e["attempt"];
        let mut attempt = text(&a["status"]);
        if let Some(p) = a["pushback"].as_array() {
            attempt.push_str(&format!(
                " pushback {}",
                p.iter().map(text).collect::<Vec<_>>().join(",")
            ));
        }
        let _ = writeln!(
            s,
            "  {:>5}  {:<14}  {:<22}  {:>4}  {:>13}  {}",
            text(&e["at_ms"]),
            text(&e["event"]),
            attempt,
            text(&step["send"]),
            text(&step["next_hedge_in_ms"]),
            text(&step["rule"])
        );
    }
    let _ = writeln!(s, "  => {}", text(&answer["end"]));
    s
}

/// An AWS retry run: each attempt's error beside the decision, its wait and the quota after it.
pub fn aws_run(input: &Value, answer: &Value) -> String {
    let empty = Vec::new();
    let events = input["events"].as_array().unwrap_or(&empty);
    let steps = answer["steps"].as_array().unwrap_or(&empty);
    let mut s = format!(
        "  {:>7}  {:<28}  {:<8}  {:>8}  {:>5}  {}\n",
        "attempt", "error", "action", "delay ms", "quota", "rule"
    );
    for (e, step) in events.iter().zip(steps) {
        let error = &e["error"];
        let shown = if error.is_null() {
            "(success)".to_owned()
        } else {
            format!("{} {}", text(&error["status"]), text(&error["code"]))
        };
        let _ = writeln!(
            s,
            "  {:>7}  {:<28}  {:<8}  {:>8}  {:>5}  {}",
            text(&step["attempts"]),
            shown.trim(),
            text(&step["action"]),
            text(&step["decision"]["delay_ms"]),
            text(&step["quota_balance"]),
            text(&step["decision"]["rule"])
        );
    }
    s
}
