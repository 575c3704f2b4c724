-- Sites with both solar generation and an EV charger.
SELECT s.site_id, s.site_name, s.region
FROM sites s
WHERE EXISTS (SELECT 1 FROM meters m WHERE m.site_id = s.site_id AND lower(m.meter_type) = 'solar')
  AND EXISTS (SELECT 1 FROM meters m WHERE m.site_id = s.site_id AND lower(m.meter_type) = 'ev_charger')
