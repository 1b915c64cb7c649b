//! The stand-in's minimal HTTP/1.1 server side: read one request (Content-Length or chunked body,
//! `Expect: 100-continue`), write a JSON response or a chunked event stream. Enough for
//! the two agent clients talking to a loopback stand-in; not a general server.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub(crate) method: String,
    /// The request target as sent: path plus optional `?query`.
    pub(crate) target: String,
    /// Header names lower-cased, in arrival order.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpRequest {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    /// Whether the client asked to close the connection after this exchange.
    pub(crate) fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.to_ascii_lowercase().contains("close"))
    }
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Read one line ending in CRLF (or LF), without the terminator. `Ok(None)` on a clean EOF
/// before any byte.
fn read_line(reader: &mut BufReader<TcpStream>, budget: &mut usize) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    let n = reader
        .by_ref()
        .take(*budget as u64 + 1)
        .read_until(b'\n', &mut buf)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(bad("request head too large"));
    }
    *budget -= n;
    if buf.last() != Some(&b'\n') {
        return Err(bad("connection closed inside a line"));
    }
    buf.pop();
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| bad("non-UTF-8 header line"))
}

/// Read one request. `Ok(None)` when the peer closed the connection between requests.
pub(crate) fn read_request(reader: &mut BufReader<TcpStream>) -> io::Result<Option<HttpRequest>> {
    let mut budget = MAX_HEAD;
    let request_line = loop {
        match read_line(reader, &mut budget)? {
            None => return Ok(None),
            Some(line) if !line.is_empty() => break line,
            Some(_) => {} // tolerate stray CRLF between requests
        }
    };
    let mut parts = request_line.split_whitespace();
    let method = parts
        .next()
        .ok_or_else(|| bad("empty request line"))?
        .to_string();
    let target = parts
        .next()
        .ok_or_else(|| bad("request line without target"))?
        .to_string();

    let mut headers = Vec::new();
    loop {
        let line = read_line(reader, &mut budget)?.ok_or_else(|| bad("EOF in headers"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad("malformed header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let mut req = HttpRequest {
        method,
        target,
        headers,
        body: Vec::new(),
    };

    if req
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        let stream = reader.get_mut();
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        stream.flush()?;
    }

    let chunked = req
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        req.body = read_chunked(reader)?;
    } else if let Some(len) = req.header("content-length") {
        let len: usize = len.parse().map_err(|_| bad("bad content-length"))?;
        if len > MAX_BODY {
            return Err(bad("body too large"));
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        req.body = body;
    }
    Ok(Some(req))
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = 4096;
        let line = read_line(reader, &mut budget)?.ok_or_else(|| bad("EOF in chunk size"))?;
        let size_hex = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16).map_err(|_| bad("bad chunk size"))?;
        if size == 0 {
            // Trailer section: header lines until an empty line.
            let mut budget = MAX_HEAD;
            while let Some(l) = read_line(reader, &mut budget)? {
                if l.is_empty() {
                    break;
                }
            }
            return Ok(body);
        }
        if body.len() + size > MAX_BODY {
            return Err(bad("body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf)?;
        if &crlf != b"\r\n" {
            return Err(bad("chunk not followed by CRLF"));
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        415 => "Unsupported Media Type",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

/// A complete response with a `Content-Length` body.
pub(crate) fn write_body(
    stream: &mut TcpStream,
    status: u16,
    content_type: &str,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         request-id: req_standin\r\nConnection: {}\r\n\r\n",
        reason(status),
        body.len(),
        if close { "close" } else { "keep-alive" },
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

/// A `text/event-stream` response sent with chunked transfer encoding, one chunk per
/// event; each event is `event: NAME` + `data: JSON`. The whole response goes out in one
/// write: Codex acts on `response.completed` without waiting for the final chunk and may
/// exit (closing the socket) right after, so nothing should be left to write by then.
pub(crate) fn write_sse(
    stream: &mut TcpStream,
    events: &[(String, serde_json::Value)],
    close: bool,
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
         Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nrequest-id: req_standin\r\n\
         Connection: {}\r\n\r\n",
        if close { "close" } else { "keep-alive" },
    );
    for (name, data) in events {
        let event = format!("event: {name}\ndata: {data}\n\n");
        let _ = write!(out, "{:x}\r\n{event}\r\n", event.len());
    }
    out.push_str("0\r\n\r\n");
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

/// A streamed answer of `data:` lines only, each event ended by a blank line (the Gemini
/// API's SSE: its client parses every `data:` line as one JSON chunk).
pub(crate) fn write_sse_data(
    stream: &mut TcpStream,
    chunks: &[serde_json::Value],
    close: bool,
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\
         Connection: {}\r\n\r\n",
        if close { "close" } else { "keep-alive" },
    );
    for data in chunks {
        let event = format!("data: {data}\r\n\r\n");
        let _ = write!(out, "{:x}\r\n{event}\r\n", event.len());
    }
    out.push_str("0\r\n\r\n");
    stream.write_all(out.as_bytes())?;
    stream.flush()
}
