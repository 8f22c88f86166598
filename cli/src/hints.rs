//! What a user needs to correct an input: the flag a field came from, the near matches and the
//! accepted names of an enumerated value.

use retrypolicy::{Error, RetryReason};

/// The flag that sets `field` in flag mode (`request.timeout_ms` is `--timeout-ms`), or the field.
pub fn flag_of(field: &str) -> String {
    let name = field.strip_prefix("request.").unwrap_or(field);
    match name {
        "reason" | "service" | "operation" | "readonly" | "method" | "attempts" | "elapsed_ms"
        | "timeout_ms" | "idempotent" | "strategy" | "random" => format!("--{}", name.replace('_', "-")),
        _ => field.to_owned(),
    }
}

/// The edit distance between `a` and `b`, ignoring case (Levenshtein).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (
        a.to_ascii_lowercase().chars().collect(),
        b.to_ascii_lowercase().chars().collect(),
    );
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The names of `accepted` within a third of `value`'s length in edits (at least 2), nearest first.
pub fn near<'a>(value: &str, accepted: &[&'a str]) -> Vec<&'a str> {
    let limit = (value.chars().count() / 3).max(2);
    let mut found: Vec<(usize, &str)> = accepted
        .iter()
        .map(|n| (distance(value, n), *n))
        .filter(|(d, _)| *d <= limit)
        .collect();
    found.sort();
    found.into_iter().map(|(_, n)| n).take(3).collect()
}

/// The lines to print under an error: near matches and the accepted names, where it has them.
pub fn hints(e: &Error) -> Vec<String> {
    let (value, accepted): (&str, Vec<&str>) = match e {
        Error::UnknownReason { value, .. } => (value, RetryReason::ALL.iter().map(|r| r.name()).collect()),
        Error::UnknownName { value, expected, .. } if !expected.is_empty() => (
            value,
            expected
                .trim_start_matches("one of ")
                .split(',')
                .map(|n| n.trim().trim_matches(|c| c == '"' || c == '`'))
                .filter(|n| !n.is_empty())
                .collect(),
        ),
        _ => return vec![],
    };
    let mut lines = vec![];
    let close = near(value, &accepted);
    if !close.is_empty() {
        lines.push(format!("did you mean {}?", close.join(" or ")));
    }
    if matches!(e, Error::UnknownReason { .. }) {
        lines.push(format!("accepted: {}", accepted.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelled_reason_finds_its_name() {
        assert_eq!(
            near("KV_LOKED", &["KV_LOCKED", "KV_NOT_MY_VBUCKET"]),
            ["KV_LOCKED"]
        );
        assert!(near("SOMETHING_ELSE_ENTIRELY", &["KV_LOCKED"]).is_empty());
    }

    #[test]
    fn flag_mode_names_flags() {
        assert_eq!(flag_of("request.timeout_ms"), "--timeout-ms");
        assert_eq!(flag_of("reason"), "--reason");
        assert_eq!(flag_of("policy.backoff"), "policy.backoff");
    }
}
