SELECT "PEOPLE"."ID" AS "ID", CONCAT("PEOPLE"."STATE", :mbql_1) AS "tagged" FROM "sample"."PEOPLE" AS "PEOPLE" WHERE ("PEOPLE"."NAME" <> :mbql_2 OR "PEOPLE"."NAME" IS NULL) ORDER BY "ID" ASC NULLS FIRST
-- :mbql_1 = ' :tag'
-- :mbql_2 = 'x :y'
