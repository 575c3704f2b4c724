-- Labour and parts cost per technician.
SELECT t.technician_id, t.full_name,
       COUNT(v.visit_id) AS visits,
       SUM(v.hours_on_site * t.hourly_rate) AS labour_cost,
       SUM(COALESCE(v.parts_cost, 0)) AS parts_cost
FROM technicians t
LEFT JOIN visits v ON v.technician_id = t.technician_id
GROUP BY t.technician_id, t.full_name
