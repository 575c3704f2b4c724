-- Headline tiles: sites, active meters, energy read, open alarms.
SELECT (SELECT COUNT(*) FROM sites) AS sites,
       (SELECT COUNT(*) FROM meters WHERE is_active) AS active_meters,
       (SELECT ROUND(SUM(kwh), 1) FROM readings) AS total_kwh,
       (SELECT COUNT(*) FROM alarms WHERE cleared_at IS NULL) AS open_alarms
