-- Handling alert: fragile parcels above 20 kg with their shipment's priority and status.
SELECT p.parcel_id, p.barcode, p.weight_kg, s.priority, s.status
FROM parcels p
JOIN shipments s ON s.shipment_id = p.shipment_id
WHERE p.is_fragile AND p.weight_kg > 20
