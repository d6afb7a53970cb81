-- The sidecars that were streaming Sync, remembered across control-plane restarts (control-plane/src/sync/
-- sidecar-registry.ts): a REST write also waits, within its 2 s, for a sidecar recently connected that has
-- not reconnected yet (right after a restart, or while its stream is briefly down), so that a key revoked
-- then is refused by that sidecar once the write answers. Written when an acking Watch stream opens
-- (replica = the control-plane replica holding it) and ends (replica NULL, last_seen_at = then); deleted
-- when the sidecar says goodbye or its key is revoked. Nothing is written per message.
CREATE TABLE sync_sidecars (
  tenant_id     text NOT NULL,
  key_id        text NOT NULL,
  sidecar_id    text NOT NULL,
  -- The replica holding the sidecar's stream (its Sync listener's application_name), NULL when none.
  replica       text,
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key_id, sidecar_id)
);
-- What a replica reads every second: the rows of the last minute (streams that ended, streams just
-- opened), and the streams of a replica gone.
CREATE INDEX sync_sidecars_seen ON sync_sidecars (last_seen_at);
CREATE INDEX sync_sidecars_replica ON sync_sidecars (replica) WHERE replica IS NOT NULL;

-- Each replica's last sign of life, written every 10 s: a sidecar held by a replica that died was last
-- seen when that replica was (one write per replica instead of one per stream).
CREATE TABLE sync_replicas (
  replica  text PRIMARY KEY,
  seen_at  timestamptz NOT NULL DEFAULT now()
);
