//! The timeline as a readable table with totals.

use std::fmt::Write;

use retrypolicy::{Decision, Ending, Scenario, Timeline};

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
