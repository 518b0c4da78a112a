//! A provider double for the tests: a real HTTP/1.1 server on 127.0.0.1 (an ephemeral port)
//! that records every request and answers with a script of raw writes and pauses, so a test
//! decides exactly where the reply's bytes are cut.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One step of an answer.
#[derive(Debug, Clone)]
pub enum Step {
    /// Write these bytes (and flush).
    Write(Vec<u8>),
    /// Write these bytes one at a time, each flushed on its own.
    Trickle(Vec<u8>),
    Sleep(Duration),
}

/// Chooses the answer to the n-th request (counting from 0).
pub type Script = dyn Fn(usize, &Recorded) -> Vec<Step> + Send + Sync;

pub struct Double {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Double {
    pub async fn start(
        script: impl Fn(usize, &Recorded) -> Vec<Step> + Send + Sync + 'static,
    ) -> Double {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let seen = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let script = script.clone();
                let seen = seen.clone();
                tokio::spawn(async move { serve(socket, script, seen).await });
            }
        });
        Double { port, requests }
    }

    pub fn base(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

async fn serve(mut socket: TcpStream, script: Arc<Script>, seen: Arc<Mutex<Vec<Recorded>>>) {
    let _ = socket.set_nodelay(true);
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let index = {
        let Ok(mut all) = seen.lock() else { return };
        all.push(request.clone());
        all.len() - 1
    };
    for step in script(index, &request) {
        let ok = match step {
            Step::Write(bytes) => {
                socket.write_all(&bytes).await.is_ok() && socket.flush().await.is_ok()
            }
            Step::Trickle(bytes) => {
                let mut ok = true;
                for b in bytes {
                    ok = socket.write_all(&[b]).await.is_ok() && socket.flush().await.is_ok();
                    if !ok {
                        break;
                    }
                    tokio::time::sleep(Duration::from_micros(200)).await;
                }
                ok
            }
            Step::Sleep(d) => {
                tokio::time::sleep(d).await;
                true
            }
        };
        if !ok {
            return;
        }
    }
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

/// A response head; the body runs until the connection closes.
pub fn head(status: &str, content_type: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut out =
        format!("HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\nconnection: close\r\n");
    for (n, v) in extra {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

pub fn sse_head() -> Vec<u8> {
    head(
        "200 OK",
        "text/event-stream",
        &[("cache-control", "no-cache")],
    )
}

/// A whole response with a JSON body and its length.
pub fn json(status: &str, body: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut h = head(status, "application/json", extra);
    h.truncate(h.len() - 2);
    h.extend_from_slice(format!("content-length: {}\r\n\r\n{body}", body.len()).as_bytes());
    h
}

/// The streaming wire of each dialect, for a reply of `parts` then a normal end; line ends
/// written as `eol`.
pub fn openai_stream(parts: &[&str], eol: &str) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(&format!(": keep-alive{eol}{eol}"));
    for p in parts {
        let chunk = serde_json::json!({"id":"c1","object":"chat.completion.chunk",
            "choices":[{"index":0,"delta":{"content":p},"finish_reason":null}]});
        out.push_str(&format!("data: {chunk}{eol}{eol}"));
    }
    out.push_str(&format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}{eol}{eol}"
    ));
    out.push_str(&format!(
        "data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":11,\"completion_tokens\":{}}}}}{eol}{eol}",
        parts.len()
    ));
    out.push_str(&format!("data: [DONE]{eol}{eol}"));
    out.into_bytes()
}

pub fn anthropic_stream(parts: &[&str], eol: &str) -> Vec<u8> {
    let mut out = String::new();
    let mut event = |name: &str, data: serde_json::Value| {
        out.push_str(&format!("event: {name}{eol}data: {data}{eol}{eol}"));
    };
    event(
        "message_start",
        serde_json::json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":21,"output_tokens":1}}}),
    );
    event(
        "content_block_start",
        serde_json::json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    );
    event("ping", serde_json::json!({"type":"ping"}));
    for p in parts {
        event(
            "content_block_delta",
            serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":p}}),
        );
    }
    event(
        "content_block_stop",
        serde_json::json!({"type":"content_block_stop","index":0}),
    );
    event(
        "message_delta",
        serde_json::json!({"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":parts.len()}}),
    );
    event("message_stop", serde_json::json!({"type":"message_stop"}));
    out.into_bytes()
}

pub fn gemini_stream(parts: &[&str], eol: &str) -> Vec<u8> {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        let mut chunk = serde_json::json!({"candidates":[{"content":{"parts":[{"text":p}],"role":"model"},"index":0}],
            "usageMetadata":{"promptTokenCount":7,"totalTokenCount":7}});
        if i + 1 == parts.len() {
            chunk["candidates"][0]["finishReason"] = "STOP".into();
            chunk["usageMetadata"]["candidatesTokenCount"] = parts.len().into();
        }
        out.push_str(&format!("data: {chunk}{eol}{eol}"));
    }
    out.into_bytes()
}

/// llama.cpp's `/completion` stream: a `content` piece per event, then one with `stop`.
pub fn llamacpp_stream(parts: &[&str], eol: &str) -> Vec<u8> {
    let mut out = String::new();
    for p in parts {
        let chunk = serde_json::json!({"content": p, "stop": false});
        out.push_str(&format!("data: {chunk}{eol}{eol}"));
    }
    let last = serde_json::json!({"content": "", "stop": true, "stop_type": "eos",
        "tokens_evaluated": 13, "tokens_predicted": parts.len()});
    out.push_str(&format!("data: {last}{eol}{eol}"));
    out.into_bytes()
}

/// KoboldCpp's stream: `message` events with a `token`, the last with its `finish_reason`.
pub fn kobold_stream(parts: &[&str], eol: &str) -> Vec<u8> {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        let reason = if i + 1 == parts.len() {
            serde_json::json!("stop")
        } else {
            serde_json::Value::Null
        };
        let chunk = serde_json::json!({"token": p, "finish_reason": reason});
        out.push_str(&format!("event: message{eol}data: {chunk}{eol}{eol}"));
    }
    out.into_bytes()
}

/// Short timeouts, so a test that waits for one does not take long.
pub fn quick() -> promptloom_send::SendOptions {
    promptloom_send::SendOptions {
        connect_timeout: Duration::from_secs(5),
        first_byte_timeout: Duration::from_secs(5),
        idle_timeout: Duration::from_secs(5),
        ..promptloom_send::SendOptions::default()
    }
}

/// One send; its result and every event the callback saw.
pub async fn run(
    connection: &promptloom_send::Connection,
    key: Option<&str>,
    model: Option<&str>,
    body: &[u8],
    stream: bool,
    options: &promptloom_send::SendOptions,
) -> (
    Result<promptloom_send::Reply, promptloom_send::SendError>,
    Vec<promptloom_send::StreamEvent>,
) {
    let mut events = Vec::new();
    let cancel = promptloom_send::CancellationToken::new();
    let result = promptloom_send::send(
        connection,
        key.map(promptloom_send::ApiKey::new),
        model,
        body.to_vec(),
        // The dialects of text completion only get a text completion.
        promptloom_send::Call {
            stream,
            completion: connection.dialect.provider_format().is_none(),
        },
        options,
        &cancel,
        |e| events.push(e.clone()),
    )
    .await;
    (result, events)
}
