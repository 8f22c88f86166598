//! The timeline as a readable table with totals.

use std::fmt::Write;

use retrypolicy::{Decision, Ending, Scenario, StormReport, StormScenario, Timeline};

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
