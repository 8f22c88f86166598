//! libretrypolicy: the C face of the `retrypolicy` core (header `include/retrypolicy.h`, cbindgen).
//!
//! A thin binding: each export converts its C arguments into the core's types, calls the core
//! (JSON through `retrypolicy_wire`), and writes the result back; no retry rule lives here. One
//! file per thing the host handles, as rustls-ffi's `librustls/src/`; the conventions (results,
//! outputs, NULL checks, enums, `bool` bytes, the panic boundary) are the header's.
//!
//! The pointer contract (the `# Safety` of every export, stated once here): each non-NULL pointer
//! must be valid for the reads (const) or writes (out-parameters) its type implies for the whole
//! call; a `(pointer, length)` text must be readable for `length` bytes; other strings are
//! NUL-terminated. Handles are checked (src/handle.rs): a freed handle, one of another type or
//! any other pointer passed as a handle is RP_RESULT_INVALID_HANDLE, never read through.
#![allow(non_camel_case_types)]
// Every export shares the one pointer contract above rather than repeating it.
#![allow(clippy::missing_safety_doc)]

mod breaker;
mod budget;
mod budget_enums;
mod budgeted;
mod classify;
mod decision;
mod enums;
mod error;
mod ffi;
mod handle;
mod json;
mod names;
mod panic;
mod policy;
mod request;
mod run;
mod strategy;

// gRPC's and the AWS SDKs' retry rules (issue 28), after the rest: their header items follow.
mod aws;
mod aws_limiter;
mod grpc;
mod grpc_config;
mod grpc_enums;

pub use crate::aws::*;
pub use crate::aws_limiter::*;
pub use crate::breaker::*;
pub use crate::budget::*;
pub use crate::budget_enums::*;
pub use crate::budgeted::*;
pub use crate::classify::*;
pub use crate::decision::*;
pub use crate::enums::*;
pub use crate::error::*;
pub use crate::ffi::CBool;
pub use crate::grpc::*;
pub use crate::grpc_config::*;
pub use crate::grpc_enums::*;
pub use crate::json::*;
pub use crate::names::*;
pub use crate::policy::*;
pub use crate::request::*;
pub use crate::run::*;
pub use crate::strategy::*;

/// The library's version at run time, e.g. "0.1.0" (static, never freed; compare with RP_VERSION).
#[no_mangle]
pub extern "C" fn rp_version() -> *const std::ffi::c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
#[path = "../tests/rust/unit.rs"]
mod unit;
