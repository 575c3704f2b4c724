-- Billed kWh against metered consumption over each bill's period.
SELECT b.bill_id, b.site_id, b.period_start, b.kwh_billed,
       ROUND(SUM(r.kwh), 3) AS metered_kwh
FROM bills b
JOIN meters m ON m.site_id = b.site_id AND lower(m.meter_type) = 'consumption'
JOIN readings r ON r.meter_id = m.meter_id
 AND CAST(r.read_at AS DATE) BETWEEN b.period_start AND b.period_end
WHERE b.status <> 'cancelled'
GROUP BY b.bill_id, b.site_id, b.period_start, b.kwh_billed
