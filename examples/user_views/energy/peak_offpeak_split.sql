-- Consumption in each site's tariff peak window versus off-peak.
SELECT s.site_id, t.name AS tariff,
       ROUND(SUM(CASE WHEN hour(r.read_at) >= t.peak_start_hour AND hour(r.read_at) < t.peak_end_hour
                      THEN r.kwh ELSE 0 END), 2) AS peak_kwh,
       ROUND(SUM(CASE WHEN hour(r.read_at) >= t.peak_start_hour AND hour(r.read_at) < t.peak_end_hour
                      THEN 0 ELSE r.kwh END), 2) AS offpeak_kwh
FROM readings r
JOIN meters m ON m.meter_id = r.meter_id
JOIN sites s ON s.site_id = m.site_id
JOIN tariffs t ON t.tariff_id = s.tariff_id
GROUP BY s.site_id, t.name
