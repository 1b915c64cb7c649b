//! A scripted stand-in for the model APIs that Claude Code and Codex talk to, so the real
//! clients run offline against `127.0.0.1`.
//!
//! It speaks the Anthropic Messages API (`POST /v1/messages[?beta=true]`, streamed SSE or
//! plain JSON; `POST /v1/messages/count_tokens`) and the `OpenAI` Responses API as Codex 0.169
//! uses it (`POST /v1/responses`, streamed SSE). Every request that offers the agent's shell
//! tool is a *turn* and is answered with the script's next [`Step`] (a shell call or a final
//! text); model requests without that tool (a client's side calls) get a short text and
//! consume no step; anything else gets `200 {}`. Every request is logged with its body
//! parsed as JSON, so a test can check what the model was shown (a deny reason in a tool
//! result, a hook's additional context).
//!
//! Guarantees: the answers are deterministic (tool-call ids from [`call_id`]); once the
//! script is used up every turn gets a final text, so a client can never loop on the
//! server; the server stops when the [`StandIn`] is dropped or after its lifetime (10
//! minutes). Measured against Claude Code 2.1.328 and Codex 0.169.0 (see
//! `/work/e2e-scratch/NOTES.md` for the event sequences and what each client sends).

use serde_json::Value;

use super::standin_gemini as gemini;
use super::standin_http as http;
use std::io::{self, BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What the model "does" in answer to one turn request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Call the shell tool once with this command. Claude Code: a `tool_use` block named
    /// `Bash` with input `{command, description}`. Codex: a `function_call` to
    /// `exec_command` with arguments `{"cmd": command}`.
    Bash(String),
    /// Answer with this text and end the turn (`end_turn` / an assistant message).
    Text(String),
}

/// Which wire protocol a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Anthropic Messages API (Claude Code).
    Messages,
    /// `OpenAI` Responses API (Codex).
    Responses,
    /// Gemini API `models/{model}:streamGenerateContent` (Gemini CLI), see [`gemini`].
    Gemini,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A request carrying the agent's tools; answered with script step `step`.
    Turn { protocol: Protocol, step: usize },
    /// A model request without the agent's tools; answered with a short text.
    Side(Protocol),
    /// `POST /v1/messages/count_tokens`.
    CountTokens,
    /// Anything else (answered `200 {}`).
    Other,
}

/// One logged request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    /// Path plus query as sent, e.g. `/v1/messages?beta=true`.
    pub(crate) target: String,
    /// Header names lower-cased.
    pub(crate) headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Value::Null` when empty, a `Value::String` when not JSON.
    pub(crate) body: Value,
    pub(crate) kind: Kind,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The turn's step index, if this request was a turn.
    pub(crate) fn step(&self) -> Option<usize> {
        match self.kind {
            Kind::Turn { step, .. } => Some(step),
            _ => None,
        }
    }
}

/// The model's side of a conversation: a fixed list of steps. Once they are used up every
/// further turn gets `Step::Text("done")`, so a client can never loop on the server.
#[derive(Clone, Default)]
pub(crate) struct Script {
    steps: Vec<Step>,
}

impl Script {
    /// An empty script (every turn answered with `done`).
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Add a shell call.
    pub(crate) fn bash(mut self, command: impl Into<String>) -> Self {
        self.steps.push(Step::Bash(command.into()));
        self
    }

    /// Add a final text.
    pub(crate) fn text(mut self, text: impl Into<String>) -> Self {
        self.steps.push(Step::Text(text.into()));
        self
    }

    fn step(&self, index: usize) -> Step {
        self.steps
            .get(index)
            .cloned()
            .unwrap_or_else(|| Step::Text("done".into()))
    }
}

/// Deterministic tool-call id of step `step`: Claude `toolu_e2e_NNN`, Codex `call_e2e_NNN`.
pub(crate) fn call_id(protocol: Protocol, step: usize) -> String {
    match protocol {
        Protocol::Messages => format!("toolu_e2e_{step:03}"),
        Protocol::Responses => format!("call_e2e_{step:03}"),
        Protocol::Gemini => format!("gem_e2e_{step:03}"),
    }
}

struct Shared {
    script: Script,
    errors: Mutex<Vec<String>>,
    disconnects: Mutex<Vec<String>>,
    next_step: AtomicUsize,
    stop: AtomicBool,
}

/// A running stand-in. Dropping it stops the server.
pub(crate) struct StandIn {
    pub(crate) port: u16,
    /// Every request received, in arrival order.
    pub(crate) requests: Arc<Mutex<Vec<Request>>>,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

const DEFAULT_LIFETIME: Duration = Duration::from_secs(600);

impl StandIn {
    /// Start on an ephemeral port of 127.0.0.1 with the default lifetime (10 minutes).
    pub(crate) fn start(script: Script) -> StandIn {
        Self::start_with_lifetime(script, DEFAULT_LIFETIME).expect("bind 127.0.0.1:0")
    }

    pub(crate) fn start_with_lifetime(script: Script, lifetime: Duration) -> io::Result<StandIn> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            script,
            errors: Mutex::new(Vec::new()),
            disconnects: Mutex::new(Vec::new()),
            next_step: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let requests = Arc::new(Mutex::new(Vec::new()));
        let accept = {
            let shared = Arc::clone(&shared);
            let requests = Arc::clone(&requests);
            thread::Builder::new()
                .name(format!("standin-{port}"))
                .spawn(move || accept_loop(&listener, &shared, &requests, lifetime))?
        };
        Ok(StandIn {
            port,
            requests,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT` (Claude Code's `ANTHROPIC_BASE_URL`; Codex wants `…/v1`).
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// A snapshot of all requests so far.
    pub(crate) fn all_requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The turn requests (those that consumed a script step), in step order.
    pub(crate) fn turns(&self) -> Vec<Request> {
        let mut turns: Vec<Request> = self
            .all_requests()
            .into_iter()
            .filter(|r| r.step().is_some())
            .collect();
        turns.sort_by_key(Request::step);
        turns
    }

    /// Protocol or I/O errors the server hit (a test should expect none).
    pub(crate) fn errors(&self) -> Vec<String> {
        self.shared.errors.lock().unwrap().clone()
    }

    /// Stop accepting and wait for the accept thread. Connection threads end on their own
    /// within a second once their client is idle.
    pub(crate) fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    requests: &Arc<Mutex<Vec<Request>>>,
    lifetime: Duration,
) {
    let deadline = Instant::now() + lifetime;
    while !shared.stop.load(Ordering::SeqCst) && Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                let requests = Arc::clone(requests);
                let _ = thread::Builder::new()
                    .name("standin-conn".into())
                    .spawn(move || serve_connection(stream, &shared, &requests, deadline));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(10));
            }
            Err(e) => {
                shared.errors.lock().unwrap().push(format!("accept: {e}"));
                thread::sleep(Duration::from_millis(50));
            }
        }
    }
    shared.stop.store(true, Ordering::SeqCst);
    // The listener is dropped with the accept thread: the port closes.
}

const IDLE_LIMIT: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(250);
const IN_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn serve_connection(
    stream: TcpStream,
    shared: &Shared,
    requests: &Mutex<Vec<Request>>,
    deadline: Instant,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut writer = write_half;
    let mut reader = BufReader::new(stream);
    let mut idle_since = Instant::now();
    loop {
        // Wait for the next request, checking now and then whether to give up.
        let _ = reader.get_ref().set_read_timeout(Some(POLL));
        match reader.fill_buf() {
            Ok([]) => return, // peer closed
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if shared.stop.load(Ordering::SeqCst)
                    || Instant::now() >= deadline
                    || idle_since.elapsed() > IDLE_LIMIT
                {
                    return;
                }
                continue;
            }
            Err(_) => return,
        }
        let _ = reader.get_ref().set_read_timeout(Some(IN_REQUEST_TIMEOUT));
        let req = match http::read_request(&mut reader) {
            Ok(Some(req)) => req,
            Ok(None) => return,
            Err(e) => {
                shared
                    .errors
                    .lock()
                    .unwrap()
                    .push(format!("read request: {e}"));
                let _ = http::write_body(&mut writer, 400, "text/plain", b"bad request", true);
                return;
            }
        };
        let close = req.wants_close();
        if let Err(e) = respond(&req, shared, requests, &mut writer, close) {
            let peer_gone = matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
            );
            let list = if peer_gone {
                &shared.disconnects
            } else {
                &shared.errors
            };
            list.lock()
                .unwrap()
                .push(format!("{} {}: {e}", req.method, req.target));
            return;
        }
        if close {
            return;
        }
        idle_since = Instant::now();
    }
}

fn parse_body(req: &http::HttpRequest) -> Result<Value, String> {
    if let Some(enc) = req.header("content-encoding")
        && !enc.eq_ignore_ascii_case("identity")
    {
        return Err(format!("unsupported content-encoding {enc}"));
    }
    if req.body.is_empty() {
        return Ok(Value::Null);
    }
    Ok(serde_json::from_slice(&req.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned())))
}

/// The agent's shell tool a request body offers (a real turn of the agent loop), by the
/// name the client gave it: Claude Code `Bash`, Copilot CLI (Messages API) `bash`, Codex
/// `exec_command`, Gemini CLI `run_shell_command`.
fn offered_shell_tool(protocol: Protocol, body: &Value) -> Option<&'static str> {
    let wanted: &[&'static str] = match protocol {
        Protocol::Messages => &["Bash", "bash"],
        Protocol::Responses => &["exec_command"],
        Protocol::Gemini => return gemini::offers_shell_tool(body).then_some(gemini::SHELL_TOOL),
    };
    let names: Vec<&str> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    wanted.iter().copied().find(|w| names.contains(w))
}

fn respond(
    req: &http::HttpRequest,
    shared: &Shared,
    requests: &Mutex<Vec<Request>>,
    out: &mut TcpStream,
    close: bool,
) -> io::Result<()> {
    let body = match parse_body(req) {
        Ok(b) => b,
        Err(e) => {
            shared
                .errors
                .lock()
                .unwrap()
                .push(format!("{} {}: {e}", req.method, req.target));
            return http::write_body(out, 415, "text/plain", e.as_bytes(), true);
        }
    };
    let path = req.path().trim_end_matches('/');
    let protocol = match (req.method.as_str(), path) {
        ("POST", "/v1/messages") => Some(Protocol::Messages),
        ("POST", "/v1/responses") => Some(Protocol::Responses),
        ("POST", p) if gemini::is_generate(p) => Some(Protocol::Gemini),
        _ => None,
    };
    let shell_tool = protocol.and_then(|p| offered_shell_tool(p, &body));
    let (kind, answer) = match protocol {
        Some(p) if shell_tool.is_some() => {
            let step = shared.next_step.fetch_add(1, Ordering::SeqCst);
            (
                Kind::Turn { protocol: p, step },
                Some(shared.script.step(step)),
            )
        }
        Some(p) => (Kind::Side(p), Some(Step::Text("ok".into()))),
        None if req.method == "POST" && path == "/v1/messages/count_tokens" => {
            (Kind::CountTokens, None)
        }
        None => (Kind::Other, None),
    };
    let logged = Request {
        target: req.target.clone(),
        headers: req.headers.clone(),
        body: body.clone(),
        kind: kind.clone(),
    };
    requests.lock().unwrap().push(logged);

    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let step_index = match kind {
        Kind::Turn { step, .. } => step,
        _ => usize::MAX,
    };
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("stand-in")
        .to_string();
    let written = match (protocol, answer) {
        (Some(Protocol::Messages), Some(step)) => {
            let tool = shell_tool.unwrap_or("Bash");
            let (events, message) = messages::answer(&step, step_index, &model, tool);
            if stream {
                http::write_sse(out, &events, close)
            } else {
                http::write_body(
                    out,
                    200,
                    "application/json",
                    message.to_string().as_bytes(),
                    close,
                )
            }
        }
        (Some(Protocol::Responses), Some(step)) => {
            let events = responses::answer(&step, step_index, &model);
            http::write_sse(out, &events, close)
        }
        (Some(Protocol::Gemini), Some(step)) => {
            let chunk = gemini::answer(&step, step_index);
            if path.contains(":stream") {
                http::write_sse_data(out, &[chunk], close)
            } else {
                http::write_body(
                    out,
                    200,
                    "application/json",
                    chunk.to_string().as_bytes(),
                    close,
                )
            }
        }
        _ if kind == Kind::CountTokens => http::write_body(
            out,
            200,
            "application/json",
            br#"{"input_tokens":42}"#,
            close,
        ),
        _ => http::write_body(out, 200, "application/json", b"{}", close),
    };
    written.map_err(|e| io::Error::new(e.kind(), format!("answering {kind:?}: {e}")))
}

/// Anthropic Messages API answers.
mod messages {
    use super::{Protocol, Step, call_id};
    use serde_json::{Value, json};

    fn usage() -> Value {
        json!({"input_tokens": 42, "output_tokens": 7,
               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
    }

    /// The SSE events for a streamed answer, and the equivalent non-streamed message.
    pub(crate) fn answer(
        step: &Step,
        index: usize,
        model: &str,
        tool: &str,
    ) -> (Vec<(String, Value)>, Value) {
        let id = format!("msg_e2e_{index:03}");
        let (block_start, delta, full_block, stop_reason) = match step {
            Step::Bash(command) => {
                let tool_id = call_id(Protocol::Messages, index);
                let input = json!({"command": command, "description": format!("e2e step {index}")});
                (
                    json!({"type": "tool_use", "id": tool_id, "name": tool, "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": input.to_string()}),
                    json!({"type": "tool_use", "id": tool_id, "name": tool, "input": input}),
                    "tool_use",
                )
            }
            Step::Text(text) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": text}),
                json!({"type": "text", "text": text}),
                "end_turn",
            ),
        };
        let ev = |name: &str, data: Value| (name.to_string(), data);
        let events = vec![
            ev(
                "message_start",
                json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage()}}),
            ),
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": block_start}),
            ),
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": delta}),
            ),
            ev(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            ev(
                "message_delta",
                json!({"type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                "usage": {"output_tokens": 7}}),
            ),
            ev("message_stop", json!({"type": "message_stop"})),
        ];
        let message = json!({"id": id, "type": "message", "role": "assistant", "model": model,
            "content": [full_block], "stop_reason": stop_reason, "stop_sequence": null,
            "usage": usage()});
        (events, message)
    }
}

/// `OpenAI` Responses API answers, as Codex 0.169 accepts them.
mod responses {
    use super::{Protocol, Step, call_id};
    use serde_json::{Value, json};

    pub(crate) fn answer(step: &Step, index: usize, model: &str) -> Vec<(String, Value)> {
        let resp_id = format!("resp_e2e_{index:03}");
        let ev = |name: &str, mut data: Value| {
            data["type"] = json!(name);
            (name.to_string(), data)
        };
        let mut events = vec![ev(
            "response.created",
            json!({"response": {"id": resp_id, "object": "response", "model": model,
                                "status": "in_progress", "output": []}}),
        )];
        match step {
            Step::Bash(command) => {
                let call = call_id(Protocol::Responses, index);
                let item_id = format!("fc_e2e_{index:03}");
                let args = json!({"cmd": command}).to_string();
                events.push(ev(
                    "response.output_item.added",
                    json!({"output_index": 0, "item": {
                    "type": "function_call", "id": item_id, "call_id": call,
                    "name": "exec_command", "arguments": "", "status": "in_progress"}}),
                ));
                events.push(ev(
                    "response.function_call_arguments.delta",
                    json!({"item_id": item_id, "output_index": 0, "delta": args}),
                ));
                events.push(ev(
                    "response.function_call_arguments.done",
                    json!({"item_id": item_id, "output_index": 0, "arguments": args}),
                ));
                events.push(ev(
                    "response.output_item.done",
                    json!({"output_index": 0, "item": {
                    "type": "function_call", "id": item_id, "call_id": call,
                    "name": "exec_command", "arguments": args, "status": "completed"}}),
                ));
            }
            Step::Text(text) => {
                let item_id = format!("msg_e2e_{index:03}");
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                events.push(ev(
                    "response.output_item.added",
                    json!({"output_index": 0, "item": {
                    "type": "message", "id": item_id, "role": "assistant",
                    "status": "in_progress", "content": []}}),
                ));
                events.push(ev(
                    "response.content_part.added",
                    json!({"item_id": item_id,
                    "output_index": 0, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}}),
                ));
                events.push(ev(
                    "response.output_text.delta",
                    json!({"item_id": item_id,
                    "output_index": 0, "content_index": 0, "delta": text}),
                ));
                events.push(ev(
                    "response.output_text.done",
                    json!({"item_id": item_id,
                    "output_index": 0, "content_index": 0, "text": text}),
                ));
                events.push(ev(
                    "response.content_part.done",
                    json!({"item_id": item_id,
                    "output_index": 0, "content_index": 0, "part": part}),
                ));
                events.push(ev(
                    "response.output_item.done",
                    json!({"output_index": 0, "item": {
                    "type": "message", "id": item_id, "role": "assistant",
                    "status": "completed", "content": [part]}}),
                ));
            }
        }
        events.push(ev(
            "response.completed",
            json!({"response": {
            "id": resp_id, "object": "response", "model": model, "status": "completed",
            "usage": {"input_tokens": 42, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 49}}}),
        ));
        events
    }
}

// ---------------------------------------------------------------------------------------
// Helpers for tests that inspect what the model was shown.

/// All string leaves of a JSON value, joined by newlines (for `contains` checks).
pub(crate) fn all_text(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// The tool result the client sent back for tool call `id`, from a later request body:
/// Claude Code — the `tool_result` content block with `tool_use_id == id`;
/// Codex — the `function_call_output` input item with `call_id == id`.
pub(crate) fn tool_result(body: &Value, id: &str) -> Option<Value> {
    if let Some(messages) = body.get("messages").and_then(Value::as_array) {
        for m in messages {
            for block in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if block.get("type").and_then(Value::as_str) == Some("tool_result")
                    && block.get("tool_use_id").and_then(Value::as_str) == Some(id)
                {
                    return Some(block.clone());
                }
            }
        }
    }
    if let Some(input) = body.get("input").and_then(Value::as_array) {
        for item in input {
            if item.get("type").and_then(Value::as_str) == Some("function_call_output")
                && item.get("call_id").and_then(Value::as_str) == Some(id)
            {
                return Some(item.clone());
            }
        }
    }
    None
}

/// The request that carried the result of step `step`'s tool call (the next turn).
pub(crate) fn request_after_step(turns: &[Request], step: usize) -> Option<&Request> {
    turns.iter().find(|r| r.step() == Some(step + 1))
}
