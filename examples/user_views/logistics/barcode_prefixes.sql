-- Data quality: parcels per barcode prefix and whether the barcode is well formed.
SELECT substr(barcode, 1, 2) AS prefix,
       barcode RLIKE '^[A-Z]{2}[0-9]{9}[A-Z]{2}$' AS well_formed,
       COUNT(*) AS parcels
FROM parcels
GROUP BY substr(barcode, 1, 2), barcode RLIKE '^[A-Z]{2}[0-9]{9}[A-Z]{2}$'
