//! gRPC status codes (grpc/grpc `doc/statuscodes.md`), read as gRFC A6 asks of a service config:
//! "in the integer form or the case-insensitive string form (eg. `[14]`, `["UNAVAILABLE"]` or
//! `["unavailable"]`)".

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::Error;
use crate::serde_form::Rejection;

/// The seventeen gRPC status codes, by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum GrpcCode {
    /// 0: not an error.
    Ok = 0,
    /// 1: cancelled, typically by the caller.
    Cancelled = 1,
    /// 2: unknown error.
    Unknown = 2,
    /// 3: the client gave an invalid argument.
    InvalidArgument = 3,
    /// 4: the deadline expired before the operation could complete.
    DeadlineExceeded = 4,
    /// 5: some requested entity was not found.
    NotFound = 5,
    /// 6: the entity the client tried to create exists.
    AlreadyExists = 6,
    /// 7: the caller may not execute the operation.
    PermissionDenied = 7,
    /// 8: some resource has been exhausted (a quota, the server's memory).
    ResourceExhausted = 8,
    /// 9: the system is not in a state the operation requires.
    FailedPrecondition = 9,
    /// 10: the operation was aborted (a concurrency conflict).
    Aborted = 10,
    /// 11: the operation was attempted past the valid range.
    OutOfRange = 11,
    /// 12: not implemented or not supported.
    Unimplemented = 12,
    /// 13: an internal error.
    Internal = 13,
    /// 14: the service is unavailable for now (the most likely code to retry).
    Unavailable = 14,
    /// 15: unrecoverable data loss or corruption.
    DataLoss = 15,
    /// 16: no valid authentication credentials.
    Unauthenticated = 16,
}

/// Every code, by number.
pub const GRPC_CODES: [GrpcCode; 17] = [
    GrpcCode::Ok,
    GrpcCode::Cancelled,
    GrpcCode::Unknown,
    GrpcCode::InvalidArgument,
    GrpcCode::DeadlineExceeded,
    GrpcCode::NotFound,
    GrpcCode::AlreadyExists,
    GrpcCode::PermissionDenied,
    GrpcCode::ResourceExhausted,
    GrpcCode::FailedPrecondition,
    GrpcCode::Aborted,
    GrpcCode::OutOfRange,
    GrpcCode::Unimplemented,
    GrpcCode::Internal,
    GrpcCode::Unavailable,
    GrpcCode::DataLoss,
    GrpcCode::Unauthenticated,
];

/// What a status code field accepts.
pub const EXPECTED: &str =
    "a gRPC status code: a number from 0 to 16 or its name (e.g. 14 or \"UNAVAILABLE\", any case)";

/// The serde form's refusal of a value that is no status code (its message holds none of the input).
pub const CODE_REJECTION: Rejection = Rejection {
    code: "out_of_range",
    field: "",
    expected: EXPECTED,
};

impl GrpcCode {
    /// The canonical upper-case name, e.g. `UNAVAILABLE`.
    pub fn name(self) -> &'static str {
        match self {
            GrpcCode::Ok => "OK",
            GrpcCode::Cancelled => "CANCELLED",
            GrpcCode::Unknown => "UNKNOWN",
            GrpcCode::InvalidArgument => "INVALID_ARGUMENT",
            GrpcCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            GrpcCode::NotFound => "NOT_FOUND",
            GrpcCode::AlreadyExists => "ALREADY_EXISTS",
            GrpcCode::PermissionDenied => "PERMISSION_DENIED",
            GrpcCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            GrpcCode::FailedPrecondition => "FAILED_PRECONDITION",
            GrpcCode::Aborted => "ABORTED",
            GrpcCode::OutOfRange => "OUT_OF_RANGE",
            GrpcCode::Unimplemented => "UNIMPLEMENTED",
            GrpcCode::Internal => "INTERNAL",
            GrpcCode::Unavailable => "UNAVAILABLE",
            GrpcCode::DataLoss => "DATA_LOSS",
            GrpcCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The code's number.
    pub fn number(self) -> u8 {
        self as u8
    }

    /// The code numbered `n`, or an error naming `field`.
    pub fn from_number(n: u64, field: &str) -> Result<GrpcCode, Error> {
        usize::try_from(n)
            .ok()
            .and_then(|i| GRPC_CODES.get(i).copied())
            .ok_or_else(|| Error::OutOfRange {
                field: field.to_owned(),
                value: n.to_string(),
                expected: EXPECTED.to_owned(),
            })
    }

    /// The code named `name` in any case, or an error naming `field`.
    pub fn from_name(name: &str, field: &str) -> Result<GrpcCode, Error> {
        GRPC_CODES
            .iter()
            .copied()
            .find(|c| c.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownName {
                field: field.to_owned(),
                value: name.to_owned(),
                expected: EXPECTED.to_owned(),
            })
    }
}

impl fmt::Display for GrpcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for GrpcCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for GrpcCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<GrpcCode, D::Error> {
        struct CodeVisitor;
        impl Visitor<'_> for CodeVisitor {
            type Value = GrpcCode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<GrpcCode, E> {
                GrpcCode::from_number(n, "").map_err(|_| CODE_REJECTION.into_de())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<GrpcCode, E> {
                Err(CODE_REJECTION.into_de())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<GrpcCode, E> {
                Err(CODE_REJECTION.into_de())
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<GrpcCode, E> {
                GrpcCode::from_name(s, "").map_err(|_| CODE_REJECTION.into_de())
            }
        }
        d.deserialize_any(CodeVisitor)
    }
}

/// A set of status codes (a policy's `retryableStatusCodes` or `nonFatalStatusCodes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct CodeSet(u32);

impl CodeSet {
    /// The set of `codes`.
    pub fn of(codes: &[GrpcCode]) -> CodeSet {
        CodeSet(codes.iter().fold(0, |bits, c| bits | 1 << c.number()))
    }

    /// Whether `code` is in the set.
    pub fn contains(self, code: GrpcCode) -> bool {
        self.0 & (1 << code.number()) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The codes in the set, by number.
    pub fn codes(self) -> impl Iterator<Item = GrpcCode> {
        GRPC_CODES.into_iter().filter(move |c| self.contains(*c))
    }
}

impl Serialize for CodeSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.codes())
    }
}

impl<'de> Deserialize<'de> for CodeSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CodeSet, D::Error> {
        Vec::<GrpcCode>::deserialize(d).map(|codes| CodeSet::of(&codes))
    }
}
