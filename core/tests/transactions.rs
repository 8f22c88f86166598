//! withTransaction's backoff ceilings and commit labels.

use retrypolicy::mongodb::errors::{
    MongoError, TRANSIENT_TRANSACTION_ERROR, UNKNOWN_TRANSACTION_COMMIT_RESULT,
};
use retrypolicy::mongodb::transaction::{
    transaction_backoff_ceiling, transaction_error_labels, TransactionCommand,
};

#[test]
fn backoff_ceilings_follow_1_5_growth_and_stop_at_500() {
    assert_eq!(transaction_backoff_ceiling(1), 7.5);
    assert_eq!(transaction_backoff_ceiling(2), 11.25);
    assert_eq!(transaction_backoff_ceiling(11), 5.0 * 1.5f64.powi(11));
    assert_eq!(transaction_backoff_ceiling(12), 500.0);
    assert_eq!(transaction_backoff_ceiling(u32::MAX), 500.0);
    let sum: f64 = (1..=13).map(transaction_backoff_ceiling).sum();
    assert!((sum - 2282.5).abs() < 0.1, "{sum}");
}

#[test]
fn commit_labels_follow_the_write_concern_rules() {
    let wce = |c: i32| MongoError {
        write_concern_code: Some(c),
        ..MongoError::default()
    };
    let utcr = |e: &MongoError| {
        transaction_error_labels(TransactionCommand::Commit, e)
            .contains(&UNKNOWN_TRANSACTION_COMMIT_RESULT.to_owned())
    };
    assert!(utcr(&wce(64)) && utcr(&wce(50)) && !utcr(&wce(100)) && !utcr(&wce(79)));
    assert!(utcr(&MongoError::network()));
    let labels = transaction_error_labels(TransactionCommand::Commit, &MongoError::network());
    assert!(!labels.contains(&TRANSIENT_TRANSACTION_ERROR.to_owned()));
    let labels = transaction_error_labels(TransactionCommand::Other, &MongoError::network());
    assert_eq!(labels, [TRANSIENT_TRANSACTION_ERROR]);
}
