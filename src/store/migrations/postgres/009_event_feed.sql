-- PostgreSQL twin of src/store/migrations/sqlite/009: indexes for the events feed, recovery and retention.
CREATE INDEX webhook_events_by_account_type ON webhook_events (account_id, type, id);
CREATE INDEX webhook_events_by_time ON webhook_events (occurred_at);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_delivery_attempts_by_event ON webhook_delivery_attempts (event_id);
