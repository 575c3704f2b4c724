-- Visits and outcomes by contractor versus staff technicians.
SELECT CASE WHEN t.is_contractor IS NULL THEN 'unknown'
            WHEN t.is_contractor THEN 'contractor' ELSE 'staff' END AS workforce,
       COALESCE(v.outcome, 'pending') AS outcome,
       COUNT(*) AS visits
FROM visits v
JOIN technicians t ON t.technician_id = v.technician_id
GROUP BY 1, 2
