-- Team store schema 2: every origin bound to the PostgreSQL role that first pushed it, the
-- chain heads each push vouched for, indexes for windowed reads, and row-level security so
-- a role can only write rows of the origins it owns.
--
-- Origins pushed before this version had no owner: they are bound to the role running the
-- upgrade (`callus sync init`). The owner of the schema reassigns one with
--   UPDATE callus.origins SET role = 'alice' WHERE origin = 'alice@laptop';
CREATE TABLE IF NOT EXISTS callus.origins (
    origin text PRIMARY KEY,
    role text NOT NULL,
    first_ms bigint NOT NULL,
    last_ms bigint NOT NULL
);
INSERT INTO callus.origins (origin, role, first_ms, last_ms)
SELECT origin, current_user, (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
       (extract(epoch FROM clock_timestamp()) * 1000)::bigint
FROM (SELECT origin FROM callus.sessions
      UNION SELECT origin FROM callus.tool_calls
      UNION SELECT origin FROM callus.audit) AS pushed
ON CONFLICT (origin) DO NOTHING;

-- One row per push that carried audit records: the head of the origin's chain it left.
CREATE TABLE IF NOT EXISTS callus.anchors (
    origin text NOT NULL,
    seq bigint NOT NULL,
    hash text NOT NULL,
    pushed_ms bigint NOT NULL,
    role text NOT NULL,
    PRIMARY KEY (origin, seq)
);
INSERT INTO callus.anchors (origin, seq, hash, pushed_ms, role)
SELECT DISTINCT ON (origin) origin, seq, hash,
       (extract(epoch FROM clock_timestamp()) * 1000)::bigint, current_user
FROM callus.audit ORDER BY origin, seq DESC
ON CONFLICT (origin, seq) DO NOTHING;

-- Windowed reads (`derive --since 7d --db …`) filter on these.
CREATE INDEX IF NOT EXISTS tool_calls_time ON callus.tool_calls ((COALESCE(started_ms, ended_ms)));
CREATE INDEX IF NOT EXISTS audit_time ON callus.audit (ts_ms);

-- Row-level security: everyone who may read the schema reads every row; a role inserts and
-- updates only rows of origins bound to it. (The tables' owner and superusers bypass RLS;
-- `sync push` checks the binding inside its transaction for them too.)
ALTER TABLE callus.origins ENABLE ROW LEVEL SECURITY;
CREATE POLICY origins_read ON callus.origins FOR SELECT USING (true);
CREATE POLICY origins_claim ON callus.origins FOR INSERT WITH CHECK (role = current_user::text);
CREATE POLICY origins_touch ON callus.origins FOR UPDATE
    USING (role = current_user::text) WITH CHECK (role = current_user::text);

ALTER TABLE callus.sessions ENABLE ROW LEVEL SECURITY;
CREATE POLICY sessions_read ON callus.sessions FOR SELECT USING (true);
CREATE POLICY sessions_own_insert ON callus.sessions FOR INSERT
    WITH CHECK (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));
CREATE POLICY sessions_own_update ON callus.sessions FOR UPDATE
    USING (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text))
    WITH CHECK (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));

ALTER TABLE callus.tool_calls ENABLE ROW LEVEL SECURITY;
CREATE POLICY tool_calls_read ON callus.tool_calls FOR SELECT USING (true);
CREATE POLICY tool_calls_own_insert ON callus.tool_calls FOR INSERT
    WITH CHECK (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));
CREATE POLICY tool_calls_own_update ON callus.tool_calls FOR UPDATE
    USING (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text))
    WITH CHECK (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));

-- Audit records and anchors are append-only: no UPDATE policy at all.
ALTER TABLE callus.audit ENABLE ROW LEVEL SECURITY;
CREATE POLICY audit_read ON callus.audit FOR SELECT USING (true);
CREATE POLICY audit_own_insert ON callus.audit FOR INSERT
    WITH CHECK (origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));

ALTER TABLE callus.anchors ENABLE ROW LEVEL SECURITY;
CREATE POLICY anchors_read ON callus.anchors FOR SELECT USING (true);
CREATE POLICY anchors_own_insert ON callus.anchors FOR INSERT
    WITH CHECK (role = current_user::text
        AND origin IN (SELECT o.origin FROM callus.origins o WHERE o.role = current_user::text));
