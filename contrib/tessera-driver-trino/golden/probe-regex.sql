SELECT name FROM conf_people WHERE REGEXP_LIKE(name, '^A')
