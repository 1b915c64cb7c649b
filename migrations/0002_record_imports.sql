-- 0002: what the recorder needs beyond 0001. `record import` remembers each file it has
-- read (size and modification time) so re-importing an unchanged history costs one stat per
-- file; changed or grown files are read again (imports are idempotent by tool_use_id). The
-- status index serves `record stats` and derive's scan of failures in a time window.

CREATE TABLE import_files (
    path         TEXT PRIMARY KEY,          -- canonical absolute path
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    format       TEXT NOT NULL,             -- claude | codex | trace
    calls        INTEGER NOT NULL,          -- calls read from it on the last import
    imported_ms  INTEGER NOT NULL
);

CREATE INDEX idx_tool_calls_status_started ON tool_calls (status, started_ms);
