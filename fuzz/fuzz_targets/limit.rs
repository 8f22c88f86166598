//! The limit on one allocation that `-malloc_limit_mb=64` (fuzz/Makefile) sets: libFuzzer enforces
//! it only through a sanitizer's malloc hooks, and these targets build without a sanitizer
//! (`-s none`), so every target installs this allocator, which aborts (a crash libFuzzer records,
//! with the input) on one allocation over 64 MB.
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The largest single allocation an input may cause, in bytes (64 MB).
const LIMIT: usize = 64 << 20;

/// The system allocator, aborting on one allocation over `LIMIT`.
struct Limited;

/// Aborts, saying why, when `size` is over `LIMIT` (writing to stderr allocates nothing).
fn check(size: usize) {
    if size > LIMIT {
        let _ = std::io::stderr()
            .write_all(b"fuzz: one allocation over 64 MB (the -malloc_limit_mb of fuzz/Makefile)\n");
        std::process::abort();
    }
}

// SAFETY: each call goes to `System` unchanged once its size is checked.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Limited = Limited;
