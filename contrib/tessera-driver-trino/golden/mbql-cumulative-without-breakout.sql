SELECT SUM("ORDERS"."QUANTITY") AS "sum", COUNT(*) AS "cum_count" FROM "sample"."ORDERS" AS "ORDERS"
