-- 0005 (record, issue 15): tool_calls.input_sha256 used to be the plain SHA-256 of the raw
-- command, a password oracle (the digest of `PGPASSWORD=hunter2 psql` gave hunter2 back to a
-- small wordlist). Rows now carry a keyed digest of the redacted text (src/digest.rs); the
-- plain ones are forgotten (a later `record import` fills the column again, keyed), with
-- secure_delete on so the old bytes are zeroed rather than left in free pages. The audit
-- chain's command_sha256 is inside hashed records and cannot be changed without breaking it.
PRAGMA secure_delete = ON;
UPDATE tool_calls SET input_sha256 = NULL WHERE input_sha256 IS NOT NULL;
