SELECT (id * 2) + 1 AS x FROM conf_people ORDER BY id NULLS FIRST
