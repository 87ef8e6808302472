//! What a transport negotiated and what a server does not offer: the TLS version and cipher
//! suite and the permessage-deflate parameters the clients' handshakes ended with, and the
//! reason (with its source) a server's manifest gives for a transport it leaves out, so
//! reports show "not offered" cells without the catalog.

use serde::{Deserialize, Serialize};

use crate::Transport;

/// One outcome of the clients' handshakes and how many sessions had it. A run normally has
/// one; two mean the server did not negotiate the same way every time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negotiated {
    /// The TLS version, e.g. `TLS 1.3` (absent in cleartext).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_version: Option<String>,
    /// The TLS cipher suite, e.g. `TLS_AES_128_GCM_SHA256` (absent in cleartext).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_cipher_suite: Option<String>,
    /// The permessage-deflate parameters the server answered with (absent: no compression).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deflate: Option<DeflateParams>,
    /// Sessions whose handshake ended this way.
    pub sessions: u64,
}

/// The permessage-deflate parameters of a server's `Sec-WebSocket-Extensions` answer
/// (RFC 7692 section 7.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeflateParams {
    /// The server's answer as sent, e.g.
    /// `permessage-deflate; server_no_context_takeover; client_no_context_takeover`.
    pub extension: String,
    /// The server resets its compression context after every message.
    pub server_no_context_takeover: bool,
    /// The client resets its compression context after every message.
    pub client_no_context_takeover: bool,
    /// The server's LZ77 window, in bits (absent: 15, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_max_window_bits: Option<u8>,
    /// The client's LZ77 window, in bits (absent: 15, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_max_window_bits: Option<u8>,
}

impl DeflateParams {
    /// Reads a `Sec-WebSocket-Extensions` value; `None` when it holds no permessage-deflate.
    pub fn parse(header: &str) -> Option<DeflateParams> {
        let offer = header
            .split(',')
            .find(|e| e.split(';').next().map(str::trim) == Some("permessage-deflate"))?;
        let mut params = DeflateParams {
            extension: offer.trim().to_string(),
            ..DeflateParams::default()
        };
        for param in offer.split(';').skip(1) {
            let (name, value) = match param.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
                None => (param.trim(), None),
            };
            let bits = value.and_then(|v| v.parse::<u8>().ok());
            match name {
                "server_no_context_takeover" => params.server_no_context_takeover = true,
                "client_no_context_takeover" => params.client_no_context_takeover = true,
                "server_max_window_bits" => params.server_max_window_bits = bits,
                "client_max_window_bits" => params.client_max_window_bits = bits,
                _ => {}
            }
        }
        Some(params)
    }

    /// `no context takeover, window 15/15 bits`: the words tables show.
    pub fn describe(&self) -> String {
        let takeover = match (
            self.server_no_context_takeover,
            self.client_no_context_takeover,
        ) {
            (true, true) => "no context takeover",
            (true, false) => "server: no context takeover",
            (false, true) => "client: no context takeover",
            (false, false) => "context takeover",
        };
        format!(
            "{takeover}, window {}/{} bits",
            self.server_max_window_bits.unwrap_or(15),
            self.client_max_window_bits.unwrap_or(15)
        )
    }
}

/// A transport a server does not offer, with the reason its manifest gives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotOffered {
    /// Manifest id, e.g. `profile-b/zig`.
    pub server: String,
    /// The transport left out.
    pub transport: Transport,
    /// Why, with its source, e.g. `std.crypto.tls holds a client only (lib/std/crypto/tls/Client.zig)`.
    pub reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_parameters_of_a_deflate_answer() {
        let p = DeflateParams::parse(
            "permessage-deflate; server_no_context_takeover; client_max_window_bits=\"10\"",
        )
        .unwrap();
        assert!(p.server_no_context_takeover);
        assert!(!p.client_no_context_takeover);
        assert_eq!(p.client_max_window_bits, Some(10));
        assert_eq!(p.server_max_window_bits, None);
        assert_eq!(
            p.describe(),
            "server: no context takeover, window 15/10 bits"
        );
    }

    #[test]
    fn an_answer_without_deflate_reads_as_none() {
        assert_eq!(DeflateParams::parse(""), None);
        assert_eq!(DeflateParams::parse("x-webkit-deflate-frame"), None);
    }
}
