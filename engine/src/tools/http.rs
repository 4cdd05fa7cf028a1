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

/// Whether an address is inside a network rather than on the internet.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b)) // CGNAT
                || a == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link-local
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
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }
}
