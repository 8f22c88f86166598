/*
 * Proof that the Rust side of the library is built with AddressSanitizer (make test-asan-rust):
 * a caller error on purpose, an input length past the end of its heap buffer. The library reads
 * those bytes in Rust (UTF-8 validation of the input), so ASan must stop the program there with a
 * heap-buffer-overflow in a Rust frame. Against the normal library the read goes unseen and the
 * program returns 0, which the Makefile counts as a failure.
 */
#include <retrypolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *input = malloc(2);
    if (input == NULL) {
        return 2;
    }
    memcpy(input, "{}", 2);
    char *out = NULL;
    /* 64 bytes claimed, 2 allocated: the overflow is in the library's read, not here. */
    rp_result result = rp_call_json("reason_flags", input, 64, &out);
    rp_string_free(out);
    free(input);
    printf("rp_call_json read past its input unnoticed (result %d)\n", (int)result);
    return 0;
}
