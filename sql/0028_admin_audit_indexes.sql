-- The audit log's pages (GET /admin/audit, docs/rules.md#audit-log), newest first: unfiltered, and by the
-- administrator an entry's metadata names (`actorId`). By user and by action the indexes of 0004 serve.

CREATE INDEX audit_logs_created_idx ON audit_logs (created_at DESC, id DESC);
CREATE INDEX audit_logs_admin_idx ON audit_logs ((metadata->>'adminId'), created_at) WHERE metadata->>'adminId' IS NOT NULL;
