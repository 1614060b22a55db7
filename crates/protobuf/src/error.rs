//! Typed errors for malformed or unsupported protobuf.

/// Why a protobuf body could not be read or a JSON value could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A varint ran past the end of its message.
    #[error("truncated varint")]
    TruncatedVarint,
    /// A varint of more than ten bytes.
    #[error("varint longer than ten bytes")]
    VarintTooLong,
    /// A length-delimited or fixed-size field ran past the end of its message.
    #[error("protobuf field {field} is cut short")]
    Truncated {
        /// The field's number.
        field: u64,
    },
    /// A wire type protobuf does not define (or a group, which Kubernetes never sends).
    #[error("unsupported wire type {wire} (field {field})")]
    UnknownWireType {
        /// The field's number.
        field: u64,
        /// The wire type read.
        wire: u64,
    },
    /// A known field sent with another wire type than its type has.
    #[error("protobuf field {field} ({name}) has wire type {found}, not {expected}")]
    WrongWireType {
        /// The field's number.
        field: u64,
        /// The field's JSON name.
        name: &'static str,
        /// The wire type read.
        found: u64,
        /// The wire type the field has.
        expected: u64,
    },
    /// A body without the `k8s\0` prefix of Kubernetes' protobuf serializer.
    #[error("missing the k8s protobuf prefix")]
    MissingPrefix,
    /// A kind this crate has no field table for.
    #[error("protobuf is not supported for {api_version} {kind}")]
    UnknownKind {
        /// The `apiVersion` the envelope names.
        api_version: String,
        /// The `kind` the envelope names.
        kind: String,
    },
    /// A field the table does not know, holding a value that is not zero (strict decoding).
    #[error("protobuf field {field} is not supported here")]
    UnknownField {
        /// The field's number.
        field: u64,
    },
    /// A JSON field the table does not know (encoding).
    #[error("the field {path} cannot be encoded as protobuf")]
    UnknownJsonField {
        /// The field's JSON path.
        path: String,
    },
    /// A value out of its type's range or shape (a time past year 9999, a string where a
    /// number belongs, an `IntOrString` of unknown type, an invalid base64 string ...).
    #[error("invalid value: {0}")]
    Invalid(String),
    /// A watch frame longer than the limit.
    #[error("a protobuf frame of {len} bytes exceeds the limit of {limit} bytes")]
    FrameTooLarge {
        /// The length the frame announces.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// Messages nested deeper than the decoder follows.
    #[error("protobuf messages nested too deeply")]
    TooDeep,
    /// What a type's `Deserialize` refused.
    #[error("{0}")]
    Custom(String),
}

impl serde::de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error::Custom(msg.to_string())
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
