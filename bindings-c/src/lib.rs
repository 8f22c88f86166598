//! libretrypolicy: the C face of the `retrypolicy` core (header `include/retrypolicy.h`, cbindgen).
//!
//! A thin binding: each export converts its C arguments into the core's types, calls the core
//! (JSON through `retrypolicy_wire`), and writes the result back; no retry rule lives here. One
//! file per thing the host handles, as rustls-ffi's `librustls/src/`.
//!
//! Conventions, as in rustls-ffi: every fallible function returns an `rp_result` and writes its
//! trailing out-parameters only on RP_RESULT_OK; every pointer argument is checked for NULL; enums
//! are `uint32_t` values checked against their constants; every `bool` read from caller memory is
//! read as a byte (`CBool`); every export runs inside the panic boundary (`panic.rs`), so a panic becomes
//! RP_RESULT_PANIC.
//!
//! The pointer contract (the `# Safety` of every export, stated once here): each non-NULL pointer
//! must be valid for the reads (const) or writes (out-parameters) its type implies for the whole
//! call; a `(pointer, length)` text must be readable for `length` bytes; other strings are
//! NUL-terminated; handles must be live (not freed) and come from this library.
#![allow(non_camel_case_types)]
// Every export shares the one pointer contract above rather than repeating it.
#![allow(clippy::missing_safety_doc)]

mod classify;
mod decision;
mod enums;
mod error;
mod ffi;
mod json;
mod names;
mod panic;
mod policy;
mod request;
mod strategy;
mod units;

use std::ffi::{c_char, CStr};

pub use crate::classify::*;
pub use crate::decision::*;
pub use crate::enums::*;
pub use crate::error::*;
pub use crate::ffi::CBool;
pub use crate::json::*;
pub use crate::names::*;
pub use crate::policy::*;
pub use crate::request::*;
pub use crate::strategy::*;
pub use crate::units::*;

/// This library's version, NUL-terminated (the same text as RP_VERSION and Cargo.toml).
const VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(v) => v,
    Err(_) => panic!("the package version contains a NUL"),
};

/// The library's version at run time, e.g. "0.1.0" (static, never freed; compare with RP_VERSION).
#[no_mangle]
pub extern "C" fn rp_version() -> *const c_char {
    crate::panic::guard(std::ptr::null(), || VERSION.as_ptr())
}

#[cfg(test)]
#[path = "../tests/rust/unit.rs"]
mod unit;
