-- Cohort retention: riders by signup month and the month they rode in.
SELECT date_format(r.signup_at, 'yyyy-MM') AS cohort,
       date_format(t.requested_at, 'yyyy-MM') AS ride_month,
       COUNT(DISTINCT r.rider_id) AS active_riders
FROM riders r
JOIN trips t ON t.rider_id = r.rider_id
WHERE t.status = 'completed' AND r.signup_at >= TIMESTAMP '2024-01-01 00:00:00'
GROUP BY date_format(r.signup_at, 'yyyy-MM'), date_format(t.requested_at, 'yyyy-MM')
