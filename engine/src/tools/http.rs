//! `http_request` (feature `http`): GET or POST JSON to a URL. It refuses
//! addresses inside the network (loopback, private, link-local, unique
//! local, CGNAT, multicast, unspecified) unless the host is allowlisted,
//! checks every address the name resolves to and connects only to a
//! checked one (so a DNS answer cannot change between check and use),
//! follows no redirects, and limits time and response size.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use super::{Tool, ToolError, ToolFuture};
use crate::model::ToolSpec;

/// The `http_request` tool and its policy.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// Hosts (names or addresses) allowed even inside the network.
    pub allow: Vec<String>,
    pub timeout: Duration,
    /// The largest response body read.
    pub max_bytes: usize,
}

impl Default for HttpRequest {
    fn default() -> Self {
        HttpRequest {
            allow: Vec::new(),
            timeout: Duration::from_secs(10),
            max_bytes: 1 << 20,
        }
    }
}

/// IPv4 ranges that are not the public internet: every entry of IANA's
/// IPv4 Special-Purpose Address Registry (RFC 6890 and its updates),
/// multicast, and the reserved 240.0.0.0/4. As (network, prefix length).
const SPECIAL_V4: &[(u32, u32)] = &[
    (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
    (0x0a00_0000, 8),  // 10.0.0.0/8 private
    (0x6440_0000, 10), // 100.64.0.0/10 shared (carrier-grade NAT)
    (0x7f00_0000, 8),  // 127.0.0.0/8 loopback
    (0xa9fe_0000, 16), // 169.254.0.0/16 link-local
    (0xac10_0000, 12), // 172.16.0.0/12 private
    (0xc000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
    (0xc000_0200, 24), // 192.0.2.0/24 documentation
    (0xc01f_c400, 24), // 192.31.196.0/24 AS112
    (0xc034_c100, 24), // 192.52.193.0/24 AMT
    (0xc058_6300, 24), // 192.88.99.0/24 6to4 relay anycast
    (0xc0a8_0000, 16), // 192.168.0.0/16 private
    (0xc0af_3000, 24), // 192.175.48.0/24 AS112 direct delegation
    (0xc612_0000, 15), // 198.18.0.0/15 benchmarking
    (0xc633_6400, 24), // 198.51.100.0/24 documentation
    (0xcb00_7100, 24), // 203.0.113.0/24 documentation
    (0xe000_0000, 4),  // 224.0.0.0/4 multicast
    (0xf000_0000, 4),  // 240.0.0.0/4 reserved, and the broadcast address
];

/// IPv6 ranges that are not the public internet: every entry of IANA's
/// IPv6 Special-Purpose Address Registry, the prefixes that embed an IPv4
/// address (IPv4-compatible, NAT64, 6to4, Teredo: they could reach an
/// internal IPv4 address), site-local and multicast.
const SPECIAL_V6: &[(u128, u32)] = &[
    (0, 96),                           // ::/96: unspecified, loopback, IPv4-compatible
    (0xffff_0000_0000, 96),            // ::ffff:0:0/96 IPv4-mapped
    (0x0064_ff9b << 96, 96),           // 64:ff9b::/96 NAT64
    (0x0064_ff9b_0001 << 80, 48),      // 64:ff9b:1::/48 local NAT64
    (0x0100 << 112, 64),               // 100::/64 discard
    (0x0100_0000_0000_0001 << 64, 64), // 100:0:0:1::/64 dummy prefix
    (0x2001 << 112, 23),               // 2001::/23 IETF protocol assignments (Teredo, ...)
    (0x2001_0db8 << 96, 32),           // 2001:db8::/32 documentation
    (0x2002 << 112, 16),               // 2002::/16 6to4
    (0x2620_004f_8000 << 80, 48),      // 2620:4f:8000::/48 AS112
    (0x3fff << 112, 20),               // 3fff::/20 documentation
    (0x5f00 << 112, 16),               // 5f00::/16 segment routing
    (0xfc00 << 112, 7),                // fc00::/7 unique local
    (0xfe80 << 112, 10),               // fe80::/10 link-local
    (0xfec0 << 112, 10),               // fec0::/10 site-local (deprecated)
    (0xff00 << 112, 8),                // ff00::/8 multicast
];

/// Whether an address is inside a network, or otherwise not a public
/// internet host, rather than on the internet. The `http_request` tool
/// refuses these unless the server's configuration allows the host.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let address = u32::from(v4);
            SPECIAL_V4
                .iter()
                .any(|&(network, length)| address >> (32 - length) == network >> (32 - length))
        }
        IpAddr::V6(v6) => {
            let address = u128::from(v6);
            SPECIAL_V6
                .iter()
                .any(|&(network, length)| address >> (128 - length) == network >> (128 - length))
        }
    }
}

impl HttpRequest {
    async fn fetch(&self, arguments: Value) -> Result<Value, ToolError> {
        let url = arguments["url"]
            .as_str()
            .ok_or_else(|| ToolError::new("expected {\"url\": \"...\"}"))?;
        let url = reqwest::Url::parse(url)
            .map_err(|error| ToolError::new(format!("not a URL: {error}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::new(format!(
                "only http and https URLs are fetched, not {}",
                url.scheme()
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| ToolError::new("the URL has no host"))?
            .to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let bare_host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((bare_host.as_str(), port))
            .await
            .map_err(|error| ToolError::new(format!("cannot resolve {host}: {error}")))?
            .collect();
        let allowed = self
            .allow
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&bare_host));
        let address = addresses
            .iter()
            .find(|address| allowed || !is_internal(address.ip()))
            .copied()
            .ok_or_else(|| {
                ToolError::new(format!(
                    "{host} is an address inside the network; the server's configuration must allow it"
                ))
            })?;
        if !allowed && addresses.iter().any(|address| is_internal(address.ip())) {
            return Err(ToolError::new(format!(
                "{host} resolves inside the network; refused"
            )));
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.timeout)
            .resolve(&bare_host, address)
            .build()
            .map_err(|error| ToolError::new(error.to_string()))?;
        let method = arguments["method"]
            .as_str()
            .unwrap_or("GET")
            .to_ascii_uppercase();
        let request = match method.as_str() {
            "GET" => client.get(url),
            "POST" => client.post(url).json(&arguments["body"]),
            other => {
                return Err(ToolError::new(format!(
                    "method {other} is not supported (GET or POST)"
                )));
            }
        };
        let response = request
            .send()
            .await
            .map_err(|error| ToolError::transient(format!("request failed: {error}")))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        let mut cut = false;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| {
                ToolError::transient(format!("reading the response failed: {error}"))
            })?;
            let room = self.max_bytes - body.len();
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if chunk.len() > room {
                cut = true;
                break;
            }
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        let body = if content_type.contains("json") && !cut {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        } else {
            Value::String(text)
        };
        Ok(json!({"status": status, "content_type": content_type, "body": body, "truncated": cut}))
    }
}

impl Tool for HttpRequest {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "http_request".into(),
            description: "Fetches a URL on the internet (GET), or POSTs JSON to it.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "method": {"type": "string", "enum": ["GET", "POST"]},
                    "body": {"description": "JSON to POST"}
                },
                "required": ["url"]
            }),
        }
    }

    fn call(&self, arguments: Value) -> ToolFuture<'_> {
        Box::pin(self.fetch(arguments))
    }
}

#[cfg(test)]
mod tests {
    use super::is_internal;

    #[test]
    fn internal_addresses_are_recognized() {
        for internal in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "198.18.0.1",
            "198.19.255.254",
            "192.0.0.8",
            "240.0.0.1",
            "224.0.0.251",
            "192.88.99.1",
            "::",
            "::1",
            "fe80::1",
            "fd00::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::a00:1",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "100::1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "8.8.8.8",
            "198.17.255.255",
            "198.20.0.1",
            "223.255.255.254",
            "2606:4700:4700::1111",
            "2a00:1450:4001::1",
            "2001:4860:4860::8888",
        ] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }
}
