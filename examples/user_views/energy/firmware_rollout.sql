-- Meters per firmware version and type.
SELECT COALESCE(firmware, 'unknown') AS firmware, lower(meter_type) AS meter_type, COUNT(*) AS meters,
       SUM(CASE WHEN is_active THEN 1 ELSE 0 END) AS active
FROM meters
GROUP BY COALESCE(firmware, 'unknown'), lower(meter_type)
