//! The Gemini API side of the stand-in, as Gemini CLI 0.61.0 calls it with
//! `GOOGLE_GEMINI_BASE_URL` set: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`
//! for the agent's turns (SSE, one `data:` chunk per event) and `:generateContent` for its
//! side calls. A turn offers `run_shell_command` among `tools[].functionDeclarations`; it is
//! answered with one `functionCall` part, or a text part and `finishReason: STOP`.
//! (Measured: with an explicit `-m` model Gemini CLI skips its model router, whose side
//! calls expect a JSON classification, and sends only turns.)

use serde_json::{Value, json};

use super::standin::{Protocol, Step, call_id};

/// Gemini CLI's shell tool.
pub(crate) const SHELL_TOOL: &str = "run_shell_command";

/// Whether `path` is a `generateContent` call of the Gemini API.
pub(crate) fn is_generate(path: &str) -> bool {
    path.starts_with("/v1beta/models/")
        && (path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent"))
}

/// Whether a request offers the shell tool.
pub(crate) fn offers_shell_tool(body: &Value) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.get("functionDeclarations").and_then(Value::as_array))
        .flatten()
        .any(|f| f.get("name").and_then(Value::as_str) == Some(SHELL_TOOL))
}

/// The one response chunk for `step`.
pub(crate) fn answer(step: &Step, index: usize) -> Value {
    let part = match step {
        Step::Bash(command) => json!({"functionCall": {
            "id": call_id(Protocol::Gemini, index),
            "name": SHELL_TOOL,
            "args": {"command": command, "description": format!("e2e step {index}")}}}),
        Step::Text(text) => json!({"text": text}),
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 42, "candidatesTokenCount": 7,
                          "totalTokenCount": 49},
        "modelVersion": "stand-in"
    })
}

/// The `functionResponse` a later request carries for the call named `id` (Gemini CLI sends
/// the call's id back), as JSON.
pub(crate) fn function_response(body: &Value, id: &str) -> Option<Value> {
    body.get("contents")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|c| c.get("parts").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.get("functionResponse"))
        .find(|r| r.get("id").and_then(Value::as_str) == Some(id))
        .cloned()
}
