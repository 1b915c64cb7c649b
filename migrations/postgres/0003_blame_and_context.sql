-- Team store schema 3: the columns local migration 0007 adds (the blamed segment, the facts
-- a host observed about a call, the session's OS, shell, sandbox and originator), so a
-- teammate's derive sees the same evidence as the member's own.
ALTER TABLE callus.tool_calls ADD COLUMN IF NOT EXISTS blamed text;
ALTER TABLE callus.tool_calls ADD COLUMN IF NOT EXISTS facts text;
ALTER TABLE callus.sessions ADD COLUMN IF NOT EXISTS os text;
ALTER TABLE callus.sessions ADD COLUMN IF NOT EXISTS shell text;
ALTER TABLE callus.sessions ADD COLUMN IF NOT EXISTS sandbox text;
ALTER TABLE callus.sessions ADD COLUMN IF NOT EXISTS originator text;
