SELECT COUNT(*) AS "count" FROM "sample"."ORDERS" AS "ORDERS"
