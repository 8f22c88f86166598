/* OK and FAILS for the cmocka programs (include after <cmocka.h> and <retrypolicy.h>). */
#ifndef RP_TESTS_CHECK_H
#define RP_TESTS_CHECK_H

/* Asserts that `call` succeeds. */
#define OK(call) assert_int_equal((call), RP_RESULT_OK)

/* Asserts that `call` fails with `code`, naming `field`. */
#define FAILS(call, code, field)                             \
    do {                                                     \
        assert_int_equal((call), (code));                    \
        assert_string_equal(rp_last_error_field(), (field)); \
    } while (0)

#endif
