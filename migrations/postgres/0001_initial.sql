-- Team store schema 1: the schema callus 0.x wrote on the first `sync push` (before
-- migrations existed). Idempotent, so a database a release before this one created is at
-- version 1 already. The three evidence tables mirror the local store's, each row keyed by
-- the origin that pushed it.
CREATE SCHEMA IF NOT EXISTS callus;
CREATE TABLE IF NOT EXISTS callus.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS callus.sessions (origin text NOT NULL, id text NOT NULL, host text NOT NULL, source text NOT NULL, cwd text, repo_root text, started_ms bigint, ended_ms bigint, agent_type text, prompts bigint NOT NULL DEFAULT 0, last_prompt_ms bigint, last_event_ms bigint, PRIMARY KEY (origin, id));
CREATE TABLE IF NOT EXISTS callus.tool_calls (origin text NOT NULL, tool_use_id text NOT NULL, session_id text, host text NOT NULL, source text NOT NULL, tool text NOT NULL, status text NOT NULL, started_ms bigint, ended_ms bigint, duration_ms bigint, command text, input_sha256 text, shape text, error text, signature text, exit_code bigint, cwd text, agent_id text, PRIMARY KEY (origin, tool_use_id));
CREATE TABLE IF NOT EXISTS callus.audit (origin text NOT NULL, seq bigint NOT NULL, ts_ms bigint NOT NULL, tool_use_id text, session_id text, record text NOT NULL, prev text NOT NULL, hash text NOT NULL, PRIMARY KEY (origin, seq));
CREATE INDEX IF NOT EXISTS tool_calls_id ON callus.tool_calls (tool_use_id);
CREATE INDEX IF NOT EXISTS sessions_id ON callus.sessions (id);
