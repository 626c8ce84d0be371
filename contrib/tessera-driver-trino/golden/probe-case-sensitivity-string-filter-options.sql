SELECT name FROM conf_people WHERE LOWER(name) LIKE '%cl%'
