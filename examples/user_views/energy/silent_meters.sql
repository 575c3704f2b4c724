-- Registered meters that have never sent a reading.
SELECT m.meter_id, m.serial_no, m.site_id, m.installed_at
FROM meters m
WHERE NOT EXISTS (SELECT * FROM readings r WHERE r.meter_id = m.meter_id)
