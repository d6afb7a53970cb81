-- Out-of-order identity events, field by field (docs/decisions.md "Webhook ordering"): each profile field
-- remembers the time of the event that last set it. An older event still fills a field no newer event
-- set (a user provisioned by a status event without an e-mail gets the e-mail of the late user.created)
-- and never overwrites one a newer event set. profile_event_at stays as the newest profile write.
ALTER TABLE users ADD COLUMN email_event_at timestamptz;
ALTER TABLE users ADD COLUMN display_name_event_at timestamptz;

-- Existing users: a field counts as set by the user's last profile event when it holds a value. An empty
-- e-mail was never set by an event (event e-mails are validated addresses), so an older event may fill it.
UPDATE users SET email_event_at = profile_event_at WHERE profile_event_at IS NOT NULL AND email <> '';
UPDATE users SET display_name_event_at = profile_event_at WHERE profile_event_at IS NOT NULL AND display_name IS NOT NULL;
