-- The events feed (GET /v1/events), recovery and retention read webhook_events by account and
-- kind, by time, and delete old events with their deliveries and attempts: indexes for each.
-- No table or column changes: events were already kept per account in the outbox.

-- The feed filtered by kind, newest first (the unfiltered feed uses webhook_events_by_account).
CREATE INDEX webhook_events_by_account_type ON webhook_events (account_id, type, id);
-- Retention: the events older than the cutoff, oldest first.
CREATE INDEX webhook_events_by_time ON webhook_events (occurred_at);
-- Pruning an event deletes its deliveries and attempts by event id.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_delivery_attempts_by_event ON webhook_delivery_attempts (event_id);
