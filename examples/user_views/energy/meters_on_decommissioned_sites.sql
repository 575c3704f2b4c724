-- Meters whose site is no longer in the site register, with their recent readings.
SELECT m.meter_id, m.site_id, COUNT(r.read_at) AS readings, MAX(r.read_at) AS last_read
FROM meters m
LEFT JOIN sites s ON s.site_id = m.site_id
LEFT JOIN readings r ON r.meter_id = m.meter_id
WHERE s.site_id IS NULL
GROUP BY m.meter_id, m.site_id
