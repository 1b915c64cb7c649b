-- 0001: the first schema. Sessions and tool calls feed derive and prune; the audit chain
-- records every guard decision where a rule fired, joinable to outcomes by tool_use_id.
-- Times are INTEGER Unix milliseconds, UTC.

CREATE TABLE sessions (
    id              TEXT PRIMARY KEY,
    host            TEXT NOT NULL,              -- claude-code | codex | trace
    source          TEXT NOT NULL,              -- hook | import
    cwd             TEXT,
    repo_root       TEXT,
    started_ms      INTEGER,
    ended_ms        INTEGER,
    agent_type      TEXT,
    prompts         INTEGER NOT NULL DEFAULT 0, -- prompts are counted, never stored
    last_prompt_ms  INTEGER,
    last_event_ms   INTEGER
);

CREATE TABLE tool_calls (
    tool_use_id   TEXT PRIMARY KEY,
    session_id    TEXT,
    host          TEXT NOT NULL,
    source        TEXT NOT NULL,                -- hook | claude-transcript | codex-rollout | trace
    tool          TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('pending', 'success', 'failure', 'interrupted', 'denied')),
    started_ms    INTEGER,
    ended_ms      INTEGER,
    duration_ms   INTEGER,
    command       TEXT,                         -- redacted command, or redacted input summary
    input_sha256  TEXT,
    shape         TEXT,                         -- command shape of the failing (or last) segment
    error         TEXT,                         -- redacted, capped at 4 KiB
    signature     TEXT,                         -- normalised error signature
    exit_code     INTEGER,
    cwd           TEXT,
    agent_id      TEXT
);

CREATE INDEX idx_tool_calls_started ON tool_calls (started_ms);
CREATE INDEX idx_tool_calls_tool_shape ON tool_calls (tool, shape, started_ms);
CREATE INDEX idx_tool_calls_session ON tool_calls (session_id);

CREATE TABLE audit (
    seq          INTEGER PRIMARY KEY,           -- 1, 2, 3, ... in chain order
    ts_ms        INTEGER NOT NULL,
    tool_use_id  TEXT,                          -- copied from the record for joins; verified
    session_id   TEXT,                          -- copied from the record for joins; verified
    record       TEXT NOT NULL,                 -- canonical JSON of the record
    prev         TEXT NOT NULL,                 -- hash of the previous record, or GENESIS
    hash         TEXT NOT NULL                  -- sha256(prev || record), lowercase hex
);

CREATE INDEX idx_audit_tool_use ON audit (tool_use_id);
CREATE INDEX idx_audit_ts ON audit (ts_ms);
