-- 0003 (derive): a partial index over the failures, by time. derive reads every failure in
-- its window first; on a store of a million calls with a few percent failures this turns a
-- scan of the time index plus a row lookup per call into a walk over the failures alone.
CREATE INDEX IF NOT EXISTS idx_tool_calls_failure_time ON tool_calls (started_ms) WHERE status = 'failure';
