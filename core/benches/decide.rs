//! `decide` and `decide_with` per call, beside a no-op called through a function pointer (the
//! floor of any call), in one run: `cargo bench -p retrypolicy` (`make bench`). Budget: decide
//! <= 25 ns on this machine kind.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use retrypolicy::{
    decide, decide_with, KvOperation, Operation, Policy, Request, RetryReason, RetryStrategy, StrategyVerdict,
};

fn noop(request: &Request, reason: RetryReason, _policy: &Policy) -> u32 {
    request.attempts + reason as u32
}

struct Fixed;

impl RetryStrategy for Fixed {
    fn retry_after(&self, _: &Request, _: RetryReason) -> Result<StrategyVerdict, retrypolicy::Error> {
        Ok(StrategyVerdict::custom_retry(25))
    }
}

fn bench(c: &mut Criterion) {
    let mut request = Request::new(Operation::Kv(KvOperation::Get), 40, 2_500);
    request.attempts = 3;
    let policy = Policy::default();
    let floor: fn(&Request, RetryReason, &Policy) -> u32 = noop;
    c.bench_function("no-op through a function pointer", |b| {
        b.iter(|| black_box(floor)(black_box(&request), black_box(RetryReason::KvLocked), &policy))
    });
    c.bench_function("decide (kv get, KV_LOCKED, best effort)", |b| {
        b.iter(|| {
            decide(
                black_box(&request),
                black_box(RetryReason::KvLocked),
                black_box(&policy),
            )
        })
    });
    c.bench_function("decide_with (a host strategy)", |b| {
        b.iter(|| {
            decide_with(
                black_box(&request),
                black_box(RetryReason::KvLocked),
                black_box(&policy),
                Some(&Fixed),
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
