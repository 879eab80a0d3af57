//! safetensors: reading a file's header for streaming conversion ([`read`]) and
//! planning the header of a file to write ([`write`](mod@write)).

pub mod read;
pub mod write;
