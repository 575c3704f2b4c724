-- Merchant directory: cleaned names, MCC group, city and a label.
SELECT DISTINCT merchant_id,
       initcap(lower(trim(name))) AS merchant,
       substr(mcc, 1, 2) AS mcc_group,
       upper(coalesce(city, 'n/a')) AS city,
       concat_ws(' / ', country, category) AS label
FROM merchants
