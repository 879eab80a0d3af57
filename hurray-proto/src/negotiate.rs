//! B.7 hellos, B.9 layout selection, B.10 device and memory-class negotiation.

use crate::error::{ErrorCode, ProtoError, Result};
use crate::message::{capability, Hello, LayoutEntry, TensorRequest, PROTOCOL_VERSION};
use crate::transcode;
use hurray_core::TensorDescriptor;

/// CPU host memory (B.7 device table).
pub const DEVICE_CPU: u8 = 0x00;
/// `STANDARD` memory class (B.7).
pub const MEMORY_STANDARD: u8 = 0x00;
/// Smallest `max_message_size` a peer may advertise and still be served: room for a
/// request or a small descriptor. Below it the hello fails (B.7 rule 3).
pub const MIN_MAX_MESSAGE_SIZE: u32 = 1024;
/// Most shards one parallel transfer uses (B.13). Shard `i` of the request on stream
/// `s` travels on stream `s + i` (Ambiguity S8, this implementation's agreement): a
/// client setting `PARALLEL_OK` keeps `s .. s + MAX_SHARDS` free for the request.
pub const MAX_SHARDS: u32 = 16;

/// Server's answer to a `CLIENT_HELLO` (B.7): the version it uses and checks.
///
/// Errors (the server sends them and closes the connection, B.7 rule 3):
/// `PROTOCOL_VERSION_MISMATCH` when the client's version is 0 (no version ≤ it
/// exists); `INVALID_MESSAGE` when the client's `max_message_size` is below
/// [`MIN_MAX_MESSAGE_SIZE`] or it advertises `RDMA_GPUDIRECT` without
/// `RDMA_DATA_PLANE`.
pub fn server_hello_for(client: &Hello, ours: &Hello) -> Result<Hello> {
    if client.protocol_version == 0 {
        return Err(ProtoError::new(
            ErrorCode::ProtocolVersionMismatch,
            "B.7: client protocol_version 0; this server speaks version 1",
        ));
    }
    check_hello(client)?;
    let mut h = ours.clone();
    h.protocol_version = PROTOCOL_VERSION.min(client.protocol_version);
    Ok(h)
}

/// Client's check of a `SERVER_HELLO` against its own hello (B.7 rule 1 and S19).
///
/// Errors: `PROTOCOL_VERSION_MISMATCH` when the server's version is above the
/// client's or 0; `INVALID_MESSAGE` as for [`server_hello_for`]. The client sends the
/// error and closes the connection.
pub fn check_server_hello(server: &Hello, ours: &Hello) -> Result<()> {
    if server.protocol_version == 0 || server.protocol_version > ours.protocol_version {
        return Err(ProtoError::new(
            ErrorCode::ProtocolVersionMismatch,
            format!(
                "B.7: server chose protocol_version {}; this client speaks 1..={}",
                server.protocol_version, ours.protocol_version
            ),
        ));
    }
    check_hello(server)
}

fn check_hello(h: &Hello) -> Result<()> {
    if h.max_message_size < MIN_MAX_MESSAGE_SIZE {
        return Err(ProtoError::invalid(format!(
            "B.17: max_message_size {} is below this peer's minimum {MIN_MAX_MESSAGE_SIZE}",
            h.max_message_size
        )));
    }
    if h.capability_flags & capability::RDMA_GPUDIRECT != 0
        && h.capability_flags & capability::RDMA_DATA_PLANE == 0
    {
        return Err(ProtoError::invalid(
            "B.7: RDMA_GPUDIRECT (bit 3) requires RDMA_DATA_PLANE (bit 2)",
        ));
    }
    Ok(())
}

/// Capabilities in effect on a connection: bits both hellos set (B.7 rule 4 for RDMA
/// and GPUDirect; parallel transfers need only the server's bit plus `PARALLEL_OK`).
pub fn agreed(client: &Hello, server: &Hello) -> u64 {
    client.capability_flags & server.capability_flags & capability::DEFINED
}

/// What a server does when B.9 selection cannot honour a preference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LayoutFallback {
    /// B.9 as written: skip to the next preference, finally serve the native layout.
    #[default]
    Native,
    /// Refuse (Ambiguity S10): `TRANSCODE_LIMIT_EXCEEDED` when a preference was
    /// skipped only because of the transcoding cap, else `LAYOUT_UNAVAILABLE` when a
    /// non-empty preference list matched nothing.
    Refuse,
}

/// The outcome of B.9 selection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Serve the stored bytes as they are.
    Native,
    /// Transcode to this layout tag.
    Transcode(u8),
}

/// B.9: picks the layout for `d` given the request and the server's abilities.
///
/// `server_transcodes` = the server advertised `TRANSCODING`; `limit` = its
/// transcoding memory cap in bytes.
///
/// Errors: only with [`LayoutFallback::Refuse`]: `TRANSCODE_LIMIT_EXCEEDED` or
/// `LAYOUT_UNAVAILABLE`.
pub fn select_layout(
    d: &TensorDescriptor,
    req: &TensorRequest,
    server_transcodes: bool,
    limit: u64,
    fallback: LayoutFallback,
) -> Result<Selection> {
    let allow = server_transcodes && req.request_flags & crate::request_flags::ALLOW_TRANSCODE != 0;
    let native = d.layout.tag();
    let mut over_limit = false;
    for e in &req.preferred_layouts {
        let LayoutEntry::Tag(t) = e else {
            continue; // B.6: extension profiles this server does not know are skipped
        };
        if *t == native {
            return Ok(Selection::Native);
        }
        if allow && transcode::can_transcode(d, *t) {
            match transcode::transcode_cost(d) {
                Some(n) if n <= limit => return Ok(Selection::Transcode(*t)),
                _ => over_limit = true,
            }
        }
    }
    if fallback == LayoutFallback::Refuse && !req.preferred_layouts.is_empty() {
        return Err(if over_limit {
            ProtoError::new(
                ErrorCode::TranscodeLimitExceeded,
                format!(
                    "B.9: transcoding {} would exceed this server's limit of {limit} bytes",
                    d.layout.name()
                ),
            )
        } else {
            ProtoError::new(
                ErrorCode::LayoutUnavailable,
                format!(
                    "B.9: stored layout {} is none of the preferred layouts",
                    d.layout.name()
                ),
            )
        });
    }
    Ok(Selection::Native)
}

/// B.10 on a CPU-only server: the device and memory class to place a response on.
///
/// `server_devices` are the tags the server advertised; `client_classes` what the
/// client's hello accepts ([`Hello::memory_classes`]). The server produces
/// `STANDARD` host memory only.
///
/// Errors: `DEVICE_UNAVAILABLE` when `preferred_device` is not a device this server
/// serves (rules 2 and 3: no silent fallback; rule 4 never applies because every
/// advertised device is served), or when the client does not accept `STANDARD`
/// memory (S11: never send a class the client did not list).
pub fn place(
    preferred_device: u8,
    server_devices: &[u8],
    client_classes: &[u8],
) -> Result<(u8, u8)> {
    if preferred_device != DEVICE_CPU || !server_devices.contains(&DEVICE_CPU) {
        return Err(ProtoError::new(
            ErrorCode::DeviceUnavailable,
            format!("B.10: device 0x{preferred_device:02X} cannot be served here (CPU 0x00 only)"),
        ));
    }
    if !client_classes.contains(&MEMORY_STANDARD) {
        return Err(ProtoError::new(
            ErrorCode::DeviceUnavailable,
            format!("B.10/S11: client accepts memory classes {client_classes:02X?}; this server produces STANDARD (0x00) only"),
        ));
    }
    Ok((DEVICE_CPU, MEMORY_STANDARD))
}
