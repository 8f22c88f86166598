//! Gives the shared library a SONAME carrying the major version (libretrypolicy.so.0), so that a
//! program linked against it keeps loading it across compatible updates.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".to_owned());
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libretrypolicy.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
