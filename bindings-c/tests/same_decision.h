/* assert_same_decision for the cmocka programs (include after <cmocka.h> and <retrypolicy.h>). */
#ifndef RP_TESTS_SAME_DECISION_H
#define RP_TESTS_SAME_DECISION_H

/* Every field of two decisions, one by one (the struct's padding is not part of a decision). */
static void assert_same_decision(const rp_decision *a, const rp_decision *b) {
    assert_int_equal(a->retry, b->retry);
    assert_int_equal(a->delay_ms, b->delay_ms);
    assert_int_equal(a->capped, b->capped);
    assert_int_equal(a->then_cancel, b->then_cancel);
    assert_int_equal(a->cause, b->cause);
    assert_int_equal(a->rule, b->rule);
    assert_int_equal(a->reason, b->reason);
    assert_int_equal(a->attempts, b->attempts);
    assert_int_equal(a->idempotent, b->idempotent);
}

#endif
