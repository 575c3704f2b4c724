-- Riders ranked by lifetime spend, with spend quartile.
SELECT rider_id, spend,
       DENSE_RANK() OVER (ORDER BY spend DESC) AS spend_rank,
       NTILE(4) OVER (ORDER BY spend DESC, rider_id) AS quartile
FROM (SELECT t.rider_id, SUM(p.amount) AS spend
      FROM payments p JOIN trips t ON p.trip_id = t.trip_id
      WHERE p.status = 'captured'
      GROUP BY t.rider_id) s
