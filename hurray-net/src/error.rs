//! The one error type of this crate.

use hurray_proto::{ErrorCode, ProtoError};

/// What can go wrong talking to a peer.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The socket failed (connection refused, reset, closed early).
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A timeout ran out (which one is named).
    #[error("timed out: {0}")]
    Timeout(&'static str),
    /// The peer sent `ERROR` (B.16); the transport stream is closed.
    #[error("peer sent ERROR {code}: {message}")]
    Remote {
        /// B.16 code (or a private one of this crate, see [`crate::wire::code`]).
        code: ErrorCode,
        /// The peer's message.
        message: String,
    },
    /// This side refused: the peer broke a protocol rule or went past a limit (this
    /// side then sent `ERROR` with `code`, when the socket still allowed it, and
    /// closed the stream), or the request itself cannot be sent (a composite head
    /// alone, a buffer not producer-synced, a message over the peer's maximum:
    /// nothing was sent).
    #[error("protocol error {code}: {message}")]
    Protocol {
        /// The B.16 code sent to the peer.
        code: ErrorCode,
        /// What was wrong.
        message: String,
    },
    /// A tensor failed a format rule (descriptor, buffers, composite).
    #[error("format: {0}")]
    Format(#[from] hurray_io::Error),
}

impl NetError {
    /// A [`NetError::Protocol`].
    pub fn protocol(code: ErrorCode, message: impl Into<String>) -> NetError {
        NetError::Protocol {
            code,
            message: message.into(),
        }
    }

    /// The B.16 code involved, when there is one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            NetError::Remote { code, .. } | NetError::Protocol { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<ProtoError> for NetError {
    fn from(e: ProtoError) -> NetError {
        NetError::Protocol {
            code: e.code,
            message: e.detail,
        }
    }
}

/// Result with [`NetError`].
pub type Result<T> = std::result::Result<T, NetError>;
