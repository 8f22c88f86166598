//! Gives the shared library its SONAME, libretrypolicy.so.SOVERSION, so that a program linked
//! against it keeps loading it across ABI-compatible updates and refuses an incompatible one.

/// The ABI's number, the N of the SONAME libretrypolicy.so.N (the Makefile reads it from here).
/// The rule (README, "ABI and SONAME"): any ABI break (a function removed or its signature
/// changed, a struct's layout changed, a constant's or enum value's meaning changed) takes the
/// next N; additions keep it. It counts ABI breaks, independently of the crate version.
const SOVERSION: u32 = 0;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libretrypolicy.so.{SOVERSION}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
