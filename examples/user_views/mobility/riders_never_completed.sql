-- Riders who signed up but never completed a trip (activation target list).
SELECT r.rider_id, r.full_name, r.city_id, r.signup_at
FROM riders r
WHERE NOT EXISTS (SELECT 1 FROM trips t WHERE t.rider_id = r.rider_id AND t.status = 'completed')
