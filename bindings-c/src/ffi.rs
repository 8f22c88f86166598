//! Reading C arguments and writing C outputs: NULL checks, text, booleans, buffers, static strings.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::sync::{OnceLock, RwLock};

use crate::error::{rp_result, Failure, RP_RESULT_BUFFER_TOO_SMALL, RP_RESULT_PANIC};
use crate::panic::{ffi_boundary, guard};

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
    #[inline]
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
#[inline]
pub(crate) unsafe fn borrow<'a, T>(p: *const T, argument: &str) -> Result<&'a T, Failure> {
    // SAFETY: forwarded from this function's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(argument))
}

/// An optional shared reference from a C pointer (NULL is `None`).
/// Safety: `p` must be NULL or valid for reads of `T` for `'a`.
#[inline]
pub(crate) unsafe fn borrow_opt<'a, T>(p: *const T) -> Option<&'a T> {
    // SAFETY: forwarded from this function's contract.
    unsafe { p.as_ref() }
}

/// RP_RESULT_NULL_POINTER naming `argument` if `p` is NULL.
#[inline]
pub(crate) fn non_null<T>(p: *const T, argument: &str) -> Result<(), Failure> {
    if p.is_null() {
        Err(Failure::null(argument))
    } else {
        Ok(())
    }
}

/// Runs `compute` inside the panic boundary and writes its value to `out`, which is checked first
/// (naming `argument`); nothing is written on failure.
/// Safety: `out` must be NULL or valid for a write of `T`.
#[inline]
pub(crate) unsafe fn write_output<T>(
    out: *mut T,
    argument: &str,
    compute: impl FnOnce() -> Result<T, Failure>,
) -> rp_result {
    ffi_boundary(|| {
        non_null(out, argument)?;
        let value = compute()?;
        // SAFETY: non-NULL, and valid for a write by this function's contract. `write` neither
        // reads nor drops the old contents, which C may have left uninitialised.
        unsafe { out.write(value) };
        Ok(())
    })
}

/// An export's body: `output!(out_param, expr)` evaluates `expr` (a `Result`) inside the panic
/// boundary and writes its value to `out_param`, which is checked first and named in errors.
macro_rules! output {
    ($out:ident, $body:expr) => {
        // SAFETY: the pointer contract (lib.rs) covers `$out` and every pointer `$body` reads.
        unsafe { $crate::ffi::write_output($out, stringify!($out), || $body) }
    };
}

pub(crate) use output;

/// Frees a handle made by `Box::into_raw`; NULL is a no-op.
/// Safety: `p` must be NULL or such a handle, not freed before and used by no thread any more.
pub(crate) unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: forwarded from this function's contract.
        guard((), || drop(unsafe { Box::from_raw(p) }));
    }
}

/// A NUL-terminated UTF-8 string from C.
/// Safety: `p` must be NULL or a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, argument: &str) -> Result<&'a str, Failure> {
    non_null(p, argument)?;
    // SAFETY: non-NULL, and a NUL-terminated string by this function's contract.
    let bytes = unsafe { CStr::from_ptr(p) };
    bytes.to_str().map_err(|e| Failure::invalid_utf8(argument, e))
}

/// A (pointer, length) UTF-8 text from C; NULL is accepted only with length 0 when `allow_empty`.
/// Safety: `p` must be NULL or point to `len` readable bytes that stay valid for `'a`.
pub(crate) unsafe fn text<'a>(
    p: *const c_char,
    len: usize,
    argument: &str,
    allow_empty: bool,
) -> Result<&'a str, Failure> {
    if p.is_null() && len == 0 && allow_empty {
        return Ok("");
    }
    non_null(p, argument)?;
    // SAFETY: non-NULL, and `len` readable bytes by this function's contract.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|e| Failure::invalid_utf8(argument, e))
}

/// Copies `s` and a NUL into the caller's buffer and stores its length (without the NUL) in
/// `*written`. When the buffer is too small, nothing is copied, `*written` receives the length
/// needed and the result is RP_RESULT_BUFFER_TOO_SMALL, which leaves this thread's last error alone.
/// Safety: `buf` must be NULL or valid for `len` bytes of writes; `written` NULL or valid for a write.
pub(crate) unsafe fn write_text(
    s: &str,
    buf: *mut c_char,
    len: usize,
    written: *mut usize,
) -> Result<(), Failure> {
    non_null(written, "written")?;
    if len > 0 {
        non_null(buf, "buf")?;
    }
    // SAFETY: `written` is non-NULL and writable; when copying, `buf` is non-NULL (len > s.len())
    // and valid for `len` bytes, and `s` is Rust-owned, so the regions cannot overlap.
    unsafe {
        written.write(s.len());
        if s.len() >= len {
            return Err(Failure::quiet(RP_RESULT_BUFFER_TOO_SMALL));
        }
        std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
        buf.add(s.len()).write(0);
    }
    Ok(())
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
    static TABLE: OnceLock<RwLock<BTreeMap<String, &'static CStr>>> = OnceLock::new();
    let table = TABLE.get_or_init(Default::default);
    if let Some(c) = table.read().unwrap_or_else(|e| e.into_inner()).get(s) {
        return c;
    }
    let mut w = table.write().unwrap_or_else(|e| e.into_inner());
    w.entry(s.to_owned()).or_insert_with(|| {
        // The core's names and sections hold no NUL; should one ever, the text is cut there.
        let c = CString::new(s.split('\0').next().unwrap_or_default()).unwrap_or_default();
        Box::leak(c.into_boxed_c_str())
    })
}
