-- 0004 (record): drop 0003's partial index of failures by time. 0002's
-- idx_tool_calls_status_started (status, started_ms) answers derive's
-- `status = 'failure' AND started_ms BETWEEN` walk the same way (equality on status, range on
-- time), and SQLite's planner already picks it, so the partial index was never read. It was
-- still written on every failure, and every short-lived hook process parsed its CREATE text
-- (SQLite parses the whole schema on a connection's first statement).
DROP INDEX IF EXISTS idx_tool_calls_failure_time;
