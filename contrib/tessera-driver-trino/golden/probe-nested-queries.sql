SELECT COUNT(*) FROM (SELECT id FROM conf_people WHERE id > 1) AS s
