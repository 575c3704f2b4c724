-- Riders who referred others, with how many of their referrals have ridden.
SELECT ref.rider_id, ref.full_name,
       COUNT(DISTINCT r.rider_id) AS referred,
       COUNT(DISTINCT t.rider_id) AS referred_who_rode
FROM riders ref
JOIN riders r ON r.referred_by = ref.rider_id
LEFT JOIN trips t ON t.rider_id = r.rider_id AND t.status = 'completed'
GROUP BY ref.rider_id, ref.full_name
