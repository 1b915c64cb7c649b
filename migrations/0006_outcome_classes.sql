-- 0005 (record): two more outcome classes in tool_calls.status (see src/record/outcome.rs):
-- `answer` (an exit status that is the program's answer, `grep` finding nothing) and
-- `harness` (the host's shell or tool failed around the command). SQLite cannot alter a
-- CHECK constraint, so the table is rebuilt with the same columns and indexes. Rows stored
-- before keep their status; derive refines old `failure` rows as it reads them.
CREATE TABLE tool_calls_0005 (
    tool_use_id   TEXT PRIMARY KEY,
    session_id    TEXT,
    host          TEXT NOT NULL,
    source        TEXT NOT NULL,
    tool          TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('pending', 'success', 'failure', 'interrupted', 'denied',
                                    'answer', 'harness')),
    started_ms    INTEGER,
    ended_ms      INTEGER,
    duration_ms   INTEGER,
    command       TEXT,
    input_sha256  TEXT,
    shape         TEXT,
    error         TEXT,
    signature     TEXT,
    exit_code     INTEGER,
    cwd           TEXT,
    agent_id      TEXT
);
INSERT INTO tool_calls_0005 SELECT tool_use_id, session_id, host, source, tool, status,
    started_ms, ended_ms, duration_ms, command, input_sha256, shape, error, signature,
    exit_code, cwd, agent_id FROM tool_calls;
DROP TABLE tool_calls;
ALTER TABLE tool_calls_0005 RENAME TO tool_calls;
CREATE INDEX idx_tool_calls_started ON tool_calls (started_ms);
CREATE INDEX idx_tool_calls_tool_shape ON tool_calls (tool, shape, started_ms);
CREATE INDEX idx_tool_calls_session ON tool_calls (session_id);
CREATE INDEX idx_tool_calls_status_started ON tool_calls (status, started_ms);
