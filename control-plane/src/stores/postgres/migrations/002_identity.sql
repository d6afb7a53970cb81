-- Identity and access (issue 9): users from identity events, teams, key listing, the audit log.

-- Identity events for an organization no tenant maps to are audited without a tenant: such rows are
-- visible to operators in the database and to no tenant through GET /api/audit.
ALTER TABLE audit_log ALTER COLUMN tenant_id DROP NOT NULL;

-- Out-of-order identity events: users.last_event_at orders status changes (created, deactivated,
-- reactivated, deleted); profile_event_at orders profile changes (email, display name), so a late
-- profile update is not lost behind a newer status change and vice versa.
ALTER TABLE users ADD COLUMN profile_event_at timestamptz;
CREATE INDEX users_tenant_created ON users (tenant_id, created_at DESC, id DESC);

-- Team names are unique within a tenant (case-insensitive), as agent names are.
CREATE UNIQUE INDEX teams_tenant_name ON teams (tenant_id, lower(name));
CREATE INDEX team_members_user ON team_members (user_id);
CREATE INDEX team_members_team_joined ON team_members (team_id, joined_at DESC, user_id DESC);

CREATE INDEX api_keys_created_by ON api_keys (created_by);

-- Deliveries are remembered 30 days (the provider retries for about 2.5 hours with fresh signatures).
ALTER TABLE webhook_deliveries ADD COLUMN event_type text;
ALTER TABLE webhook_deliveries ADD COLUMN outcome text;
CREATE INDEX webhook_deliveries_time ON webhook_deliveries (received_at);
