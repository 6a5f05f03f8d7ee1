-- The dashboard's days are calendar days of BUSINESS_TIMEZONE (docs/rules.md#business-timezone; UTC by default).
-- A settled day is cached under the zone it was computed in, so a change of zone never serves a day of another
-- zone: the new zone's days are computed again on first need. The rows already here were UTC days.
ALTER TABLE dashboard_days ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC';
ALTER TABLE dashboard_days ALTER COLUMN time_zone DROP DEFAULT;
ALTER TABLE dashboard_days DROP CONSTRAINT dashboard_days_pkey;
ALTER TABLE dashboard_days ADD PRIMARY KEY (time_zone, day);

-- user_activity_days.day (the dashboard's activeToday) is now the user's day of activity in BUSINESS_TIMEZONE.
