-- agentgov control-plane schema, version 1. Every row carries tenant_id; every query filters by it.

CREATE TABLE tenants (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  idp_org_id  text NOT NULL UNIQUE,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  email          text NOT NULL,
  display_name   text,
  role           text NOT NULL DEFAULT 'member' CHECK (role IN ('admin', 'member')),
  status         text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deactivated', 'deleted')),
  idp_user_id    text,
  last_event_at  timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_idp_user ON users (tenant_id, idp_user_id) WHERE idp_user_id IS NOT NULL;
CREATE INDEX users_tenant_email ON users (tenant_id, lower(email));

CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  tenant_id     text NOT NULL REFERENCES tenants(id),
  name          text NOT NULL,
  scope         text NOT NULL CHECK (scope IN ('api', 'agent', 'ingest')),
  prefix        text NOT NULL,
  key_hash      text NOT NULL UNIQUE,
  created_by    text NOT NULL REFERENCES users(id),
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_used_at  timestamptz,
  deleted_at    timestamptz
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at DESC, id DESC);

CREATE TABLE agents (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  name            text NOT NULL,
  description     text,
  model_provider  text NOT NULL DEFAULT '',
  model_name      text NOT NULL DEFAULT '',
  environment     text NOT NULL DEFAULT '',
  status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
  config_yaml     text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name)
);
CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at DESC, id DESC);

CREATE TABLE agent_deployments (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  agent_id     text NOT NULL REFERENCES agents(id),
  version      integer NOT NULL,
  config_yaml  text NOT NULL,
  deployed_by  text NOT NULL,
  deployed_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (agent_id, version)
);

CREATE TABLE policies (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  name         text NOT NULL,
  description  text,
  status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  action       text NOT NULL CHECK (action IN ('block', 'redact', 'log')),
  priority     integer NOT NULL DEFAULT 100,
  conditions   jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX policies_tenant ON policies (tenant_id, created_at DESC, id DESC);

CREATE TABLE policy_agents (
  tenant_id  text NOT NULL REFERENCES tenants(id),
  policy_id  text NOT NULL REFERENCES policies(id) ON DELETE CASCADE,
  agent_id   text NOT NULL REFERENCES agents(id),
  PRIMARY KEY (policy_id, agent_id)
);
CREATE INDEX policy_agents_agent ON policy_agents (agent_id);

CREATE TABLE agent_tools (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id),
  agent_id        text NOT NULL REFERENCES agents(id),
  tool_name       text NOT NULL,
  call_count      bigint NOT NULL DEFAULT 0,
  last_called_at  timestamptz NOT NULL,
  UNIQUE (agent_id, tool_name)
);

CREATE TABLE teams (
  id           text PRIMARY KEY,
  tenant_id    text NOT NULL REFERENCES tenants(id),
  name         text NOT NULL,
  description  text,
  scopes       text[] NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX teams_tenant ON teams (tenant_id, created_at DESC, id DESC);

CREATE TABLE team_members (
  team_id    text NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
  user_id    text NOT NULL REFERENCES users(id),
  tenant_id  text NOT NULL REFERENCES tenants(id),
  role       text NOT NULL CHECK (role IN ('admin', 'member')),
  joined_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);

CREATE TABLE audit_log (
  id             text PRIMARY KEY,
  tenant_id      text NOT NULL REFERENCES tenants(id),
  action         text NOT NULL,
  actor_user_id  text,
  actor_key_id   text,
  target_type    text NOT NULL,
  target_id      text,
  request_id     text,
  details        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_tenant ON audit_log (tenant_id, created_at DESC, id DESC);

-- Every governance change appends a row here in the same transaction; the version orders Sync deltas.
CREATE TABLE sync_changes (
  version     bigserial PRIMARY KEY,
  tenant_id   text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('agent', 'policy', 'key', 'user', 'spend')),
  entity_id   text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sync_changes_tenant ON sync_changes (tenant_id, version);

CREATE TABLE agent_spend (
  tenant_id  text NOT NULL,
  agent_id   text NOT NULL,
  day        date NOT NULL,
  spent_usd  double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, day)
);

-- Traces already counted into agent_tools (ingest is at-least-once).
CREATE TABLE trace_receipts (
  trace_id     text PRIMARY KEY,
  tenant_id    text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trace_receipts_time ON trace_receipts (received_at);

CREATE TABLE webhook_deliveries (
  delivery_key  text PRIMARY KEY,
  received_at   timestamptz NOT NULL DEFAULT now()
);
