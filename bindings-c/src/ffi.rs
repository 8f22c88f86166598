//! Reading C arguments and writing C outputs: NULL checks, text, booleans, buffers, static strings.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Failure, RP_RESULT_INVALID_UTF8, RP_RESULT_PANIC, RP_RESULT_POISONED};

/// A C `bool` as the library reads it: the byte itself, where any non-zero value is true.
///
/// Hosts that fill structs byte by byte (ctypes, cgo, Zig) may store 2 or 0xff in a `bool`, which
/// is no Rust `bool`: every `bool` the library reads from caller memory is this type, so reading
/// one is never undefined and never trusted to be 0 or 1. The header spells it `bool`.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CBool(u8);

impl CBool {
    /// The byte as a truth value: non-zero is true.
    pub(crate) fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for CBool {
    fn from(b: bool) -> CBool {
        CBool(u8::from(b))
    }
}

/// A shared reference from a C pointer, or RP_RESULT_NULL_POINTER naming `argument`.
/// Safety: `p` must be NULL or valid for reads of `T` for `'a`.
pub(crate) unsafe fn borrow<'a, T>(p: *const T, argument: &str) -> Result<&'a T, Failure> {
    // SAFETY: forwarded from this function's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(argument))
}

/// RP_RESULT_NULL_POINTER naming `argument` if `p` is NULL (creating no reference: outputs may be
/// uninitialised).
pub(crate) fn non_null<T>(p: *const T, argument: &str) -> Result<(), Failure> {
    match p.is_null() {
        true => Err(Failure::null(argument)),
        false => Ok(()),
    }
}

/// An export's body: `output!(out_param, expr)` checks `out_param` (named in errors), evaluates
/// `expr` (a `Result`) and writes its value there, inside the panic boundary; nothing is written
/// on failure.
macro_rules! output {
    ($out:ident, $body:expr) => {
        // SAFETY: the pointer contract (lib.rs) covers `$out` and every pointer `$body` reads.
        // `write` neither reads nor drops the old contents, which C may have left uninitialised.
        $crate::panic::ffi_boundary(|| unsafe {
            $crate::ffi::non_null($out, stringify!($out))?;
            let value: Result<_, $crate::error::Failure> = $body;
            Ok($out.write(value?))
        })
    };
}

pub(crate) use output;

/// The state behind a handle's lock (`argument` names the handle), waiting for other threads; a
/// lock a panicking call left poisoned is RP_RESULT_POISONED, never a panic.
pub(crate) fn lock<'a, T>(mutex: &'a Mutex<T>, argument: &str) -> Result<MutexGuard<'a, T>, Failure> {
    mutex.lock().map_err(|_| {
        let detail = format!(
            "{argument}: a call panicked while holding this handle's lock; free it and make a new one"
        );
        Failure::named(RP_RESULT_POISONED, argument, detail)
    })
}

/// A UTF-8 text from C: (pointer, length), where NULL with length 0 is "", or NUL-terminated
/// when `len` is None.
/// Safety: `p` must be NULL, or NUL-terminated / readable for `len` bytes, and valid for `'a`.
pub(crate) unsafe fn text<'a>(
    p: *const c_char,
    len: Option<usize>,
    argument: &str,
) -> Result<&'a str, Failure> {
    if p.is_null() && len == Some(0) {
        return Ok("");
    }
    non_null(p, argument)?;
    // SAFETY: non-NULL, and NUL-terminated or `len` readable bytes by this function's contract.
    let bytes = unsafe {
        match len {
            Some(len) => std::slice::from_raw_parts(p.cast::<u8>(), len),
            None => CStr::from_ptr(p).to_bytes(),
        }
    };
    std::str::from_utf8(bytes).map_err(|e| {
        let detail = format!("{argument}: invalid UTF-8 at byte {}", e.valid_up_to());
        Failure::named(RP_RESULT_INVALID_UTF8, argument, detail)
    })
}

/// A string the caller owns and frees with `rp_string_free`.
pub(crate) fn owned_string(s: String) -> Result<*mut c_char, Failure> {
    let s = CString::new(s).map_err(|_| Failure::new(RP_RESULT_PANIC, "output text contains a NUL"))?;
    Ok(s.into_raw())
}

/// A static, NUL-terminated copy of `s`, made once per distinct text and kept for the life of the
/// process (names, rules and spec sections are a small fixed set), so C may keep the pointer.
/// A BTreeMap, not a HashMap: leak checkers see its nodes as reachable.
pub(crate) fn intern(s: &str) -> &'static CStr {
    static TABLE: Mutex<BTreeMap<String, &'static CStr>> = Mutex::new(BTreeMap::new());
    let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(c) = table.get(s) {
        return c;
    }
    // The core's names and sections hold no NUL; should one ever, it is dropped.
    let c: &'static CStr = Box::leak(CString::new(s.replace('\0', "")).unwrap_or_default().into());
    table.insert(s.to_owned(), c);
    c
}
