//! The network protocol core (`streams-and-transport.md` Part B, `hurray-proto`): bytes
//! from a hostile peer into a server or a client connection. Control byte 0: bit 0
//! feeds a client instead of a server, bit 1 uses the in-place path
//! (`read_buf`/`advance`) instead of a `Framer` + `on_frame`, bit 2 prepends a valid
//! hello (server side) so that inputs reach the request/PUT states quickly; byte 1 is
//! the chunk size. Checks: nothing panics; a framer never holds more than a header,
//! one payload of the advertised maximum and its 64 KiB discard scratch; the same bytes
//! fed whole and in chunks give the same transmitted bytes and the same events.
#![no_main]

use hurray_fuzz::split_control;
use hurray_proto::{
    capability, Client, ClientConfig, GetOptions, Hello, Message, Server, ServerConfig, Transmit,
};
use libfuzzer_sys::fuzz_target;

const MAX: u32 = 4096;

fn wire(out: &mut Vec<u8>, t: Transmit) {
    match t {
        Transmit::Bytes { bytes, .. } => out.extend_from_slice(&bytes),
        Transmit::Data {
            prefix,
            buffer,
            range,
            ..
        } => {
            out.extend_from_slice(&prefix);
            out.extend_from_slice(&buffer.as_slice()[range]);
        }
        Transmit::CloseConnection => out.extend_from_slice(b"<close>"),
    }
}

enum Peer {
    S(Server),
    C(Client),
}

fn run(body: &[u8], client: bool, in_place: bool, chunk: usize) -> (Vec<u8>, Vec<String>) {
    let mut peer = if client {
        let mut c = Client::new(ClientConfig {
            max_message_size: MAX,
            ..ClientConfig::default()
        });
        c.on_message(
            1,
            Message::ServerHello(Hello {
                protocol_version: 1,
                max_message_size: MAX,
                capability_flags: capability::PARALLEL_STREAMS,
                supported_layouts: vec![],
                supported_devices: vec![0],
                supported_memory_classes: None,
            }),
        );
        c.get("a", &GetOptions::default()).unwrap();
        c.get(
            "b",
            &GetOptions {
                parallel: true,
                ..GetOptions::default()
            },
        )
        .unwrap();
        Peer::C(c)
    } else {
        Peer::S(Server::new(ServerConfig {
            max_message_size: MAX,
            ..ServerConfig::default()
        }))
    };
    let mut framer = match &peer {
        Peer::S(s) => s.framer(),
        Peer::C(c) => c.framer(),
    };
    let mut out = Vec::new();
    let mut events = Vec::new();
    // Drain after every step, as an I/O layer does: then what a step sends never
    // depends on how the bytes were cut (a stream closing cancels what is queued).
    let drain = |peer: &mut Peer, out: &mut Vec<u8>, events: &mut Vec<String>| match peer {
        Peer::S(s) => {
            while let Some(t) = s.poll_transmit() {
                wire(out, t);
            }
            while let Some(e) = s.poll_event() {
                events.push(format!("{e:?}"));
            }
        }
        Peer::C(c) => {
            while let Some(t) = c.poll_transmit() {
                wire(out, t);
            }
            while let Some(e) = c.poll_event() {
                events.push(format!("{e:?}"));
            }
        }
    };
    drain(&mut peer, &mut out, &mut events);
    let mut rest = body;
    while !rest.is_empty() {
        let take = chunk.min(rest.len());
        if in_place {
            let mut part = &rest[..take];
            while !part.is_empty() {
                let dst = match &mut peer {
                    Peer::S(s) => s.read_buf(),
                    Peer::C(c) => c.read_buf(),
                };
                assert!(!dst.is_empty(), "read_buf is never empty");
                let n = dst.len().min(part.len());
                dst[..n].copy_from_slice(&part[..n]);
                match &mut peer {
                    Peer::S(s) => s.advance(n),
                    Peer::C(c) => c.advance(n),
                }
                drain(&mut peer, &mut out, &mut events);
                part = &part[n..];
            }
        } else {
            let mut part = &rest[..take];
            while !part.is_empty() {
                let p = framer.push(part);
                part = &part[p.consumed..];
                if let Some(e) = p.event {
                    match &mut peer {
                        Peer::S(s) => s.on_frame(e),
                        Peer::C(c) => c.on_frame(e),
                    }
                    drain(&mut peer, &mut out, &mut events);
                }
                assert!(framer.buffered() <= 12 + MAX as usize + 64 * 1024);
            }
        }
        rest = &rest[take..];
    }
    (out, events)
}

fuzz_target!(|data: &[u8]| {
    let (ctl, body) = split_control(data);
    let client = ctl[0] & 1 != 0;
    let in_place = ctl[0] & 2 != 0;
    let mut input = Vec::new();
    if ctl[0] & 4 != 0 && !client {
        Message::ClientHello(ClientConfig::default().hello())
            .encode_into(1, &mut input)
            .unwrap();
    }
    input.extend_from_slice(body);
    let chunk = usize::from(ctl[1].max(1));
    let whole = run(&input, client, in_place, usize::MAX);
    let chunked = run(&input, client, in_place, chunk);
    assert_eq!(whole.0, chunked.0, "chunking changed what was sent");
    assert_eq!(whole.1, chunked.1, "chunking changed the events");
});
