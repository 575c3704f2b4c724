-- Billing: chargeable weight (the greater of actual and volumetric weight) per shipment.
SELECT shipment_id, COUNT(*) AS parcels,
       ROUND(SUM(GREATEST(COALESCE(weight_kg, 0), length_cm * width_cm * height_cm / 5000.0)), 2) AS chargeable_kg
FROM parcels
GROUP BY shipment_id
