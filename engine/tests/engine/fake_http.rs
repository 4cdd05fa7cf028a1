//! A fake HTTP server for tests: answers its n-th request with a canned
//! reply (JSON, an SSE stream, or silence) and records the request bodies.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[derive(Clone)]
#[cfg_attr(not(feature = "openai"), allow(dead_code))]
pub enum Reply {
    Json(u16, Value),
    Sse(Vec<Value>),
    Slow(Duration),
}

pub struct Fake {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

/// A server answering its n-th request with `replies[n]` (the last one
/// again once they run out).
pub async fn serve(replies: Vec<Reply>) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let reply = replies[n.min(replies.len() - 1)].clone();
            n += 1;
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                let body_start = loop {
                    let read = socket.read(&mut chunk).await.unwrap_or(0);
                    if read == 0 {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..read]);
                    if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buffer[..body_start]).to_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buffer.len() < body_start + length {
                    let read = socket.read(&mut chunk).await.unwrap_or(0);
                    if read == 0 {
                        break;
                    }
                    buffer.extend_from_slice(&chunk[..read]);
                }
                let body: Value =
                    serde_json::from_slice(&buffer[body_start..]).unwrap_or(Value::Null);
                seen.lock().unwrap().push(body);
                let response = match reply {
                    Reply::Json(status, value) => {
                        let body = value.to_string();
                        format!(
                            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    Reply::Sse(chunks) => {
                        let mut body = String::new();
                        for chunk in chunks {
                            body.push_str(&format!("data: {chunk}\n\n"));
                        }
                        body.push_str("data: [DONE]\n\n");
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    Reply::Slow(delay) => {
                        tokio::time::sleep(delay).await;
                        return;
                    }
                };
                let _ = socket.write_all(response.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    Fake { base_url, requests }
}
