-- Hours on site by technician region and technician, with subtotals.
SELECT t.region, t.full_name, SUM(v.hours_on_site) AS hours, COUNT(*) AS visits
FROM visits v
JOIN technicians t ON t.technician_id = v.technician_id
GROUP BY ROLLUP (t.region, t.full_name)
