-- What derive and conditioned rules need from each call and session (issue 25):
-- the segment a failure is blamed on, facts the host observed about the call (JSON: for
-- example the size of a file a Read returned), and the session's context (the OS, the
-- shell the host runs commands in, the sandbox and the originator a host reports).
ALTER TABLE tool_calls ADD COLUMN blamed TEXT;
ALTER TABLE tool_calls ADD COLUMN facts TEXT;
ALTER TABLE sessions ADD COLUMN os TEXT;
ALTER TABLE sessions ADD COLUMN shell TEXT;
ALTER TABLE sessions ADD COLUMN sandbox TEXT;
ALTER TABLE sessions ADD COLUMN originator TEXT;
